#!/usr/bin/env bash
# Installs, generates, checks and tests the Go, Python, TypeScript and Java clients and the
# YARN-style adapter, each installed the way its users install it.
#
#   scripts/clients.sh setup            # venv + pip packages, npm ci (idempotent)
#   scripts/clients.sh generate         # regenerate the Python and TypeScript code
#   scripts/clients.sh check-generated  # fail when the committed generated code is stale
#   scripts/clients.sh test             # setup, check-generated, then every client's
#                                       # tests and round trip against a real sluiced
#   scripts/clients.sh go|python|typescript|java|yarn   # one of them (after setup), against
#                                       # SLUICE_SERVER (no credentials), SLUICE_TOKEN_SERVER
#                                       # (wants SLUICE_TOKEN) and SLUICE_REPLICAS (three raft
#                                       # members; SLUICE_REPLICA_FOLLOWER one that follows), or
#                                       # sluiced servers started for the run
#
# How each is installed and used: Go from a module of its own with a replace of this checkout
# (clients/go/example, copied out of the repository); Python with pip install
# ./clients/python into a venv; TypeScript with npm ci in the package (prepare builds it) and
# npm install --install-links of the package from a project of its own; Java with mvn
# install (Surefire runs the JUnit tests), then the YARN adapter depends on it by its Maven
# coordinates. Needs Go, Python 3.10+ with venv and pip, Node 20+ with npm, Java 17+ with
# Maven, and the PyPI, npm and Maven Central registries (or their caches); scripts/setup.sh
# installs the system packages. Everything installed goes to SLUICE_CACHE (default
# .cache/clients in the repository, ignored by git), the npm package's node_modules,
# clients/java/target, and Maven's ~/.m2.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SLUICE_CACHE:-$ROOT/.cache/clients}
VENV=$CACHE/venv
PY=$VENV/bin/python
TS=$ROOT/clients/typescript
JAVA=$ROOT/clients/java
PYCLIENT=$ROOT/clients/python

# Pins for generating the Python code: grpcio-tools bundles protoc (libprotoc 35.1) and
# needs a protobuf runtime of the same major; clients/python/pyproject.toml says what
# the generated code needs at run time.
GRPCIO_TOOLS=grpcio-tools==1.85.1
GRPCIO=grpcio==1.85.1
PROTOBUF=protobuf==7.36.2
# What the client needs besides (see clients/python/pyproject.toml): its error helpers
# read the google.rpc.Status of errors, and the generated types import the code of
# google.api.field_behavior (proto/google), both from googleapis-common-protos.
GRPCIO_STATUS=grpcio-status==1.85.1
GOOGLEAPIS_PROTOS=googleapis-common-protos==1.76.0

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'clients.sh: %s\n' "$*" >&2; exit 1; }

need() {
	command -v "$1" >/dev/null 2>&1 || die "$1 is not installed: $2"
}

# setup installs what the clients need; it does nothing that is already done.
setup() {
	need go "install Go"
	need python3 "install Python 3.10+ with venv and pip"
	need node "install Node.js 20+"
	need npm "install npm"
	need mvn "install Maven 3.8+ and a JDK 17+"
	mkdir -p "$CACHE"
	[ -f "$ROOT/.cache/.gitignore" ] || { mkdir -p "$ROOT/.cache" && echo '*' >"$ROOT/.cache/.gitignore"; }

	local stamp=$CACHE/venv.stamp want
	want="$GRPCIO_TOOLS $GRPCIO $PROTOBUF $GRPCIO_STATUS $GOOGLEAPIS_PROTOS $(cksum <"$PYCLIENT/pyproject.toml")"
	if [ ! -x "$PY" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
		log "python: creating $VENV"
		rm -rf "$VENV"
		python3 -m venv "$VENV"
		"$PY" -m pip install --quiet --disable-pip-version-check "$GRPCIO_TOOLS" "$GRPCIO" "$PROTOBUF" \
			"$GRPCIO_STATUS" "$GOOGLEAPIS_PROTOS"
		echo "$want" >"$stamp"
	fi
	install_python_client

	stamp=$TS/node_modules/.sluice-lock.cksum
	want=$(cksum <"$TS/package-lock.json")
	if [ ! -d "$TS/node_modules" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
		log "typescript: npm ci"
		(cd "$TS" && npm ci --no-audit --no-fund --loglevel=error)
		echo "$want" >"$stamp"
	fi
}

# install_python_client installs the client into the venv (not editable) as a user would, so
# that the tests see the package's real contents: on every run, after any edit.
install_python_client() {
	[ -x "$PY" ] || die "no venv at $VENV: run scripts/clients.sh setup first"
	log "python: pip install clients/python"
	"$PY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$PYCLIENT"
	"$PY" -m pip check >/dev/null || die "pip check failed in $VENV"
}

# gen_python OUT writes the Python code generated from proto/ into OUT/sluice/v1.
gen_python() {
	local out=$1
	mkdir -p "$out"
	(cd "$ROOT" && "$PY" -m grpc_tools.protoc -Iproto \
		--python_out="$out" --pyi_out="$out" --grpc_python_out="$out" proto/sluice/v1/*.proto)
}

# gen_typescript OUT writes the TypeScript code generated from proto/ into OUT.
gen_typescript() {
	local out=$1 tmpl
	tmpl=$(mktemp --suffix=.yaml)
	sed "s#out: clients/typescript/src/gen#out: $out#" "$TS/buf.gen.yaml" >"$tmpl"
	(cd "$ROOT" && go tool buf generate --template "$tmpl")
	rm -f "$tmpl"
}

generate() {
	log "python: generating clients/python/src/sluice/v1"
	rm -f "$PYCLIENT"/src/sluice/v1/*_pb2*.py "$PYCLIENT"/src/sluice/v1/*_pb2*.pyi
	gen_python "$PYCLIENT/src"
	log "typescript: generating clients/typescript/src/gen"
	(cd "$ROOT" && go tool buf generate --template clients/typescript/buf.gen.yaml)
}

check_generated() {
	local tmp stale=0
	tmp=$(mktemp -d)
	gen_python "$tmp/py"
	if diff -r -x __init__.py -x __pycache__ "$tmp/py/sluice/v1" "$PYCLIENT/src/sluice/v1" >"$tmp/py.diff"; then
		echo "clients/python generated code is up to date"
	else
		cat "$tmp/py.diff" | head -50 >&2
		echo "clients/python generated code is stale: run scripts/clients.sh generate" >&2
		stale=1
	fi
	gen_typescript "$tmp/ts"
	if diff -r "$tmp/ts" "$TS/src/gen" >"$tmp/ts.diff"; then
		echo "clients/typescript generated code is up to date"
	else
		cat "$tmp/ts.diff" | head -50 >&2
		echo "clients/typescript generated code is stale: run scripts/clients.sh generate" >&2
		stale=1
	fi
	rm -rf "$tmp"
	return $stale
}

# Servers started by this script: their pids, and a directory for the binary and logs.
SERVER_PIDS=()
SERVER_DIR=
STARTED=
stop_servers() {
	local pid
	for pid in "${SERVER_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	SERVER_PIDS=()
	[ -z "$SERVER_DIR" ] || rm -rf "$SERVER_DIR"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# build_sluiced builds sluiced into SERVER_DIR, once.
build_sluiced() {
	if [ -z "$SERVER_DIR" ]; then
		SERVER_DIR=$(mktemp -d)
		trap stop_servers EXIT
		log "building sluiced"
		(cd "$ROOT" && go build -o "$SERVER_DIR/sluiced" ./cmd/sluiced) >&2
	fi
}

# start_sluiced NAME [FLAG...] starts sluiced (built once) on free loopback ports with the
# flags, waits for /healthz on its admin port, and sets STARTED to its gRPC address. (Not
# in a subshell: the pid list and the EXIT trap must be this shell's.)
start_sluiced() {
	local name=$1 try grpc admin i pid
	shift
	build_sluiced
	for try in 1 2 3; do
		grpc=$(free_port)
		admin=$(free_port)
		"$SERVER_DIR/sluiced" --listen "127.0.0.1:$grpc" --admin-listen "127.0.0.1:$admin" \
			--log-level warn "$@" >"$SERVER_DIR/$name.log" 2>&1 &
		pid=$!
		SERVER_PIDS+=("$pid")
		for i in $(seq 1 100); do
			if python3 -c "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:$admin/healthz', timeout=1).status == 200 else 1)" 2>/dev/null; then
				log "sluiced ($name) is up: gRPC 127.0.0.1:$grpc, admin 127.0.0.1:$admin"
				STARTED=127.0.0.1:$grpc
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		log "sluiced ($name) did not come up (try $try):"
		cat "$SERVER_DIR/$name.log" >&2
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	die "could not start sluiced ($name)"
}

# A token the second server accepts (only its SHA-256 is in the tokens file).
TOKEN=clients-test-token

# start_servers starts a plaintext server without credentials (SLUICE_SERVER) and one that
# wants a bearer token (SLUICE_TOKEN_SERVER, token in SLUICE_TOKEN).
start_servers() {
	local tokens
	start_sluiced open
	SLUICE_SERVER=$STARTED
	tokens=$SERVER_DIR/tokens.yaml
	printf -- '- name: clients-test\n  sha256: %s\n  clusters: ["*"]\n' \
		"$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)" >"$tokens"
	start_sluiced tokens --tokens "$tokens"
	SLUICE_TOKEN_SERVER=$STARTED
	SLUICE_TOKEN=$TOKEN
	export SLUICE_SERVER SLUICE_TOKEN_SERVER SLUICE_TOKEN
}

ensure_servers() {
	if [ -z "${SLUICE_SERVER:-}" ] || [ -z "${SLUICE_TOKEN_SERVER:-}" ]; then
		start_servers
	fi
	if [ -z "${SLUICE_REPLICAS:-}" ]; then
		start_replicated
	fi
}

# free_ports N prints N distinct free loopback ports, one per line (every socket is held
# until the last is chosen, so that none is handed out twice).
free_ports() {
	python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in ss))
for s in ss: s.close()' "$1"
}

# REPLICA_PORTS holds the replicated members' gRPC, admin and raft ports (3 each), when this
# script started them.
REPLICA_PORTS=()

# member_raft I prints member I's raft state and, once it is ready, the leader's gRPC address.
member_raft() {
	python3 -c "import json, sys, urllib.request
r = json.load(urllib.request.urlopen('http://127.0.0.1:${REPLICA_PORTS[3 * $1 + 1]}/raft', timeout=1))
print(r.get('state', ''), r.get('leader_addr', '') if r.get('ready') else '')" 2>/dev/null
}

# refresh_follower points SLUICE_REPLICA_FOLLOWER at a member that follows now, so that a
# leader elected since the members started does not fail a test that needs a follower (a
# no-op for members this script did not start).
refresh_follower() {
	local j i
	[ ${#REPLICA_PORTS[@]} -eq 9 ] || return 0
	for j in $(seq 1 50); do
		for i in 0 1 2; do
			case "$(member_raft "$i")" in
			"Follower 127.0.0.1:"*)
				SLUICE_REPLICA_FOLLOWER=127.0.0.1:${REPLICA_PORTS[3 * i]}
				export SLUICE_REPLICA_FOLLOWER
				return 0
				;;
			esac
		done
		sleep 0.2
	done
	log "no replicated member follows a leader now; keeping $SLUICE_REPLICA_FOLLOWER"
}

# start_replicated starts three sluiced members forming one raft cluster (plaintext, no
# credentials), waits until they agree on a leader, and exports SLUICE_REPLICAS (the
# members' gRPC addresses, comma-separated) and SLUICE_REPLICA_FOLLOWER (the gRPC address
# of a member that followed when they started): the clients' tests of leader following.
start_replicated() {
	local try ports peers i j pid raft leader follower
	build_sluiced
	for try in 1 2 3; do
		mapfile -t ports < <(free_ports 9)
		REPLICA_PORTS=("${ports[@]}")
		peers=""
		for i in 0 1 2; do
			peers+="${peers:+,}r$i=127.0.0.1:${ports[3 * i + 2]}@127.0.0.1:${ports[3 * i]}"
		done
		for i in 0 1 2; do
			mkdir -p "$SERVER_DIR/replica-$try-$i"
			"$SERVER_DIR/sluiced" --listen "127.0.0.1:${ports[3 * i]}" --admin-listen "127.0.0.1:${ports[3 * i + 1]}" \
				--raft-listen "127.0.0.1:${ports[3 * i + 2]}" --raft-peers "$peers" --node-id "r$i" --bootstrap \
				--data-dir "$SERVER_DIR/replica-$try-$i" --log-level warn >"$SERVER_DIR/replica-$try-$i.log" 2>&1 &
			pid=$!
			SERVER_PIDS+=("$pid")
		done
		for j in $(seq 1 150); do
			leader="" follower=""
			for i in 0 1 2; do
				raft=$(member_raft "$i") || raft=""
				case "$raft" in
				"Leader 127.0.0.1:${ports[3 * i]}") leader=127.0.0.1:${ports[3 * i]} ;;
				"Follower 127.0.0.1:"*) follower=127.0.0.1:${ports[3 * i]} ;;
				esac
			done
			if [ -n "$leader" ] && [ -n "$follower" ]; then
				SLUICE_REPLICAS=127.0.0.1:${ports[0]},127.0.0.1:${ports[3]},127.0.0.1:${ports[6]}
				SLUICE_REPLICA_FOLLOWER=$follower
				export SLUICE_REPLICAS SLUICE_REPLICA_FOLLOWER
				log "replicated sluiced is up: members $SLUICE_REPLICAS, leader $leader"
				return 0
			fi
			sleep 0.2
		done
		REPLICA_PORTS=()
		log "replicated sluiced did not elect a leader (try $try):"
		cat "$SERVER_DIR"/replica-"$try"-*.log >&2
		for pid in "${SERVER_PIDS[@]: -3}"; do
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		done
	done
	die "could not start a replicated sluiced"
}

# The test functions run inside "if" in all_tests, where set -e does not apply: every
# step says "|| return 1" itself.

# test_go uses the Go client from a module of its own outside the repository, as a user
# would: clients/go/example with its replace pointed at this checkout.
test_go() {
	local mod
	mod=$(mktemp -d)
	cp "$ROOT/clients/go/example/"{go.mod,go.sum,main.go} "$mod/" || return 1
	log "go: a module of its own (replace github.com/sluice-sched/sluice => $ROOT)"
	(cd "$mod" && go mod edit -replace "github.com/sluice-sched/sluice=$ROOT" && GOFLAGS=-mod=mod go mod tidy &&
		go vet . && go build -o sluice-roundtrip .) || { rm -rf "$mod"; return 1; }
	"$mod/sluice-roundtrip" --server "$SLUICE_SERVER" || { rm -rf "$mod"; return 1; }
	log "go: with a bearer token"
	"$mod/sluice-roundtrip" --server "$SLUICE_TOKEN_SERVER" --token "$SLUICE_TOKEN" || { rm -rf "$mod"; return 1; }
	rm -rf "$mod"
}

test_python() {
	refresh_follower
	log "python: unit tests"
	(cd "$PYCLIENT" && SLUICE_REQUIRE_SERVERS=1 "$PY" -m unittest discover -s tests -v) || return 1
	log "python: examples/roundtrip.py"
	"$PY" "$PYCLIENT/examples/roundtrip.py" --server "$SLUICE_SERVER" || return 1
	log "python: examples/roundtrip.py with a bearer token"
	"$PY" "$PYCLIENT/examples/roundtrip.py" --server "$SLUICE_TOKEN_SERVER" --token "$SLUICE_TOKEN" || return 1
}

test_typescript() {
	refresh_follower
	log "typescript: tsc"
	(cd "$TS" && npm run --silent build) || return 1
	log "typescript: node --test"
	(cd "$TS" && SLUICE_REQUIRE_SERVERS=1 npm test --silent) || return 1
	log "typescript: examples/roundtrip.ts"
	node "$TS/dist/examples/roundtrip.js" --server "$SLUICE_SERVER" || return 1
	log "typescript: examples/roundtrip.ts with a bearer token"
	node "$TS/dist/examples/roundtrip.js" --server "$SLUICE_TOKEN_SERVER" --token "$SLUICE_TOKEN" || return 1
	test_typescript_installed || return 1
}

# test_typescript_installed installs the package into a project of its own, as a user
# would (npm install --install-links PATH: a copy of the packed package, its dependencies
# from the registry), and imports it by name.
test_typescript_installed() {
	local app
	app=$(mktemp -d)
	log "typescript: npm install --install-links clients/typescript in a project of its own"
	printf '{"name": "sluice-user", "version": "1.0.0", "private": true, "type": "module"}\n' >"$app/package.json"
	cat >"$app/roundtrip.js" <<'JS'
import { SluiceClient, binds, job, node, task } from "@sluice-sched/client";
const [server, token] = process.argv.slice(2);
const c = new SluiceClient(server, { cluster: "installed-typescript", token: token || undefined });
await c.apply([node("n1", { cpu: "8" }), job("j", { minAvailable: 2 }),
  task("j-0", "j", { cpu: "1" }), task("j-1", "j", { cpu: "1" })], { replaceAll: true });
const got = binds((await c.commit(await c.schedule())).applied);
c.close();
if (got["default/j-0"] !== "n1" || got["default/j-1"] !== "n1") { console.error("binds", got); process.exit(1); }
console.log("installed package round trip: bound", JSON.stringify(got));
JS
	(cd "$app" && npm install --install-links --no-audit --no-fund --loglevel=error "$TS" >/dev/null &&
		node roundtrip.js "$SLUICE_SERVER" && node roundtrip.js "$SLUICE_TOKEN_SERVER" "$SLUICE_TOKEN") ||
		{ rm -rf "$app"; return 1; }
	rm -rf "$app"
}

test_java() {
	refresh_follower
	log "java: mvn install (JUnit tests against SLUICE_SERVER; then in ~/.m2 as io.github.sluice-sched:sluice-client:0.1.0)"
	# Maven 3.8 prints colour resets even in batch mode; strip them.
	(cd "$JAVA" && set -o pipefail && SLUICE_REQUIRE_SERVERS=1 mvn -B -q install 2>&1 | sed $'s/\x1b\\[[0-9;]*m//g') || return 1
	log "java: RoundTrip"
	java -cp "$JAVA/target/sluice-client-0.1.0.jar:$JAVA/target/lib/*" \
		io.github.sluicesched.sluice.examples.RoundTrip --server "$SLUICE_SERVER" || return 1
	log "java: RoundTrip with a bearer token"
	java -cp "$JAVA/target/sluice-client-0.1.0.jar:$JAVA/target/lib/*" \
		io.github.sluicesched.sluice.examples.RoundTrip --server "$SLUICE_TOKEN_SERVER" --token "$SLUICE_TOKEN" || return 1
}

# test_yarn runs the YARN-style adapter's tests, a Maven project that depends on the Java
# client by its coordinates, against SLUICE_SERVER; after test_java the client is in ~/.m2.
test_yarn() {
	SLUICE_JAVA_CLIENT_INSTALLED=${JAVA_INSTALLED:-} bash "$ROOT/clients/adapters/yarn/run-tests.sh" || return 1
}

all_tests() {
	local start=$SECONDS failed=() t
	setup
	check_generated
	start_servers
	start_replicated
	for t in go python typescript java yarn; do
		if "test_$t"; then
			echo "PASS clients/$t"
			[ "$t" != java ] || JAVA_INSTALLED=1
		else
			echo "FAIL clients/$t" >&2
			failed+=("$t")
		fi
	done
	echo "client tests and round trips took $((SECONDS - start))s"
	echo "clients: $((5 - ${#failed[@]})) passed, ${#failed[@]} failed"
	[ ${#failed[@]} -eq 0 ] || die "failed: ${failed[*]}"
}

case "${1:-}" in
setup) setup ;;
generate) setup && generate ;;
check-generated) setup && check_generated ;;
go | typescript | java | yarn) ensure_servers && "test_$1" ;;
python) install_python_client && ensure_servers && test_python ;;
test) all_tests ;;
*)
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
