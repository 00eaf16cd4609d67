#!/usr/bin/env bash
# Installs what `make test` needs on a fresh Debian or Ubuntu machine (make setup):
#
#   - with apt-get (as root), the tools that are missing: git, make, openssl, Python 3 with
#     venv and pip, Node.js and npm, a JDK and Maven;
#   - then checks their versions (Go 1.26+, Python 3.10+, Node 20+, Java 17+) and says which
#     are too old, since the distribution's may be (Debian 12's Node.js is 18: install Node
#     20 from your usual source);
#   - then the clients' packages (scripts/clients.sh setup: a venv under .cache/clients with
#     pinned grpcio-tools, grpcio and protobuf from PyPI, npm ci);
#   - then Chromium, for the test that opens the simulation report (scripts/browser.sh).
#
# Go itself is not installed here: take the version of go.mod's go line from go.dev or your
# distribution. buf and the protoc plugins need nothing: they are go.mod tool directives.
# The Slurm end-to-end test (make test-slurm) installs Debian's Slurm packages itself.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
log() { printf '==> %s\n' "$*" >&2; }
problems=()

# Debian package for each command that may be missing.
declare -A pkg=([git]=git [make]=make [openssl]=openssl [python3]=python3 [node]=nodejs [npm]=npm
	[java]=openjdk-17-jdk-headless [mvn]=maven)
missing=()
for cmd in git make openssl python3 node npm java mvn; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("${pkg[$cmd]}")
done
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
	missing+=(python3-venv python3-pip)
fi
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "setup.sh: missing ${missing[*]}; install them (apt-get as root on Debian/Ubuntu)" >&2
		exit 1
	fi
	log "apt-get install ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# version CMD MIN_MAJOR MIN_MINOR OUTPUT: complain when OUTPUT's first x.y is older.
version() {
	local cmd=$1 major=$2 minor=$3 v
	v=$(grep -oE '[0-9]+\.[0-9]+' <<<"$4" | head -n 1)
	if [ -z "$v" ]; then
		problems+=("$cmd: cannot tell its version")
	elif [ "${v%%.*}" -lt "$major" ] || { [ "${v%%.*}" -eq "$major" ] && [ "${v#*.}" -lt "$minor" ]; }; then
		problems+=("$cmd $v is too old: $major.$minor or newer is needed")
	else
		log "$cmd $v"
	fi
}
if command -v go >/dev/null 2>&1; then
	version go 1 26 "$(go env GOVERSION)"
else
	problems+=("go is not installed: install the version of go.mod's go line")
fi
version python3 3 10 "$(python3 --version 2>&1)"
version node 20 0 "$(node --version)"
version java 17 0 "$(java -version 2>&1 | head -n 1 | sed 's/^[^"]*"//')"
version mvn 3 8 "$(mvn -v 2>/dev/null | head -n 1 | sed 's/\x1b\[[0-9;]*m//g; s/^[^0-9]*//')"
if [ ${#problems[@]} -gt 0 ]; then
	printf 'setup.sh: %s\n' "${problems[@]}" >&2
	exit 1
fi

log "clients' packages (scripts/clients.sh setup)"
bash "$ROOT/scripts/clients.sh" setup
log "a headless browser for the simulation report's test (scripts/browser.sh install)"
bash "$ROOT/scripts/browser.sh" install
log "ready: make test"
