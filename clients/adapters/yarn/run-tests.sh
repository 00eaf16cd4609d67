#!/usr/bin/env bash
# Builds and tests the YARN-style adapter (clients/adapters/yarn) against a real sluiced:
#
#   1. installs the Java client (clients/java) into the local Maven repository
#      (mvn -q -B install -DskipTests), which the adapter's pom depends on by its
#      coordinates (skipped with SLUICE_JAVA_CLIENT_INSTALLED=1: scripts/clients.sh has
#      just installed it);
#   2. builds sluiced and starts it on free loopback ports (plaintext, no credentials),
#      waiting for /healthz on its admin port;
#   3. runs the adapter's JUnit 5 tests (mvn -q -B test) with SLUICE_SERVER set to the
#      server and SLUICE_REQUIRE_SERVERS=1, so that a missing server fails instead of skipping;
#   4. stops the server and prints "yarn-adapter: N passed, N failed" from Surefire's reports.
#
# With SLUICE_SERVER already set (HOST:PORT of a plaintext sluiced), uses it instead of
# starting one. `make clients-test` runs this from scripts/clients.sh test.
#
# Needs Go, Java 17+ with Maven 3.8+, python3 (free ports, health check) and Maven Central
# (or a warm ~/.m2).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
JAVA=$ROOT/clients/java

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'run-tests.sh: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is not installed: $2"; }
# Maven 3.8 prints colour resets even in batch mode; strip them.
nocolor() { sed $'s/\x1b\\[[0-9;]*m//g'; }

need go "install Go"
need mvn "install Maven 3.8+ and a JDK 17+"
need java "install a JDK 17+"
need python3 "install Python 3"

start=$SECONDS
SERVER_PID=
SERVER_DIR=
cleanup() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	[ -z "$SERVER_DIR" ] || rm -rf "$SERVER_DIR"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start_sluiced() {
	local try grpc admin i
	SERVER_DIR=$(mktemp -d)
	log "building sluiced"
	(cd "$ROOT" && go build -o "$SERVER_DIR/sluiced" ./cmd/sluiced) >&2
	for try in 1 2 3; do
		grpc=$(free_port)
		admin=$(free_port)
		"$SERVER_DIR/sluiced" --listen "127.0.0.1:$grpc" --admin-listen "127.0.0.1:$admin" \
			--log-level warn >"$SERVER_DIR/sluiced.log" 2>&1 &
		SERVER_PID=$!
		for i in $(seq 1 100); do
			if python3 -c "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:$admin/healthz', timeout=1).status == 200 else 1)" 2>/dev/null; then
				log "sluiced is up: gRPC 127.0.0.1:$grpc, admin 127.0.0.1:$admin"
				SLUICE_SERVER=127.0.0.1:$grpc
				return 0
			fi
			kill -0 "$SERVER_PID" 2>/dev/null || break
			sleep 0.1
		done
		log "sluiced did not come up (try $try):"
		cat "$SERVER_DIR/sluiced.log" >&2
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	done
	die "could not start sluiced"
}

if [ "${SLUICE_JAVA_CLIENT_INSTALLED:-}" = 1 ]; then
	log "java client: already installed in the local Maven repository"
else
	log "java client: mvn install (into the local Maven repository)"
	(cd "$JAVA" && set -o pipefail && mvn -q -B install -DskipTests 2>&1 | nocolor) || die "installing clients/java failed"
fi

if [ -z "${SLUICE_SERVER:-}" ]; then
	start_sluiced
else
	log "using SLUICE_SERVER=$SLUICE_SERVER"
fi
export SLUICE_SERVER
export SLUICE_REQUIRE_SERVERS=1

log "yarn adapter: mvn test"
rm -rf "$HERE/target/surefire-reports"
status=0
(cd "$HERE" && set -o pipefail && mvn -q -B test 2>&1 | nocolor) || status=$?

# Totals from Surefire's XML reports (mvn -q prints nothing on success).
read -r tests failures errors skipped < <(python3 "$ROOT/scripts/surefire-totals.py" "$HERE/target/surefire-reports")
failed=$((failures + errors))
echo "yarn adapter build and tests took $((SECONDS - start))s"
echo "yarn-adapter: $((tests - failed - skipped)) passed, $failed failed, $skipped skipped"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then
	[ -z "$SERVER_DIR" ] || { log "sluiced log:"; tail -n 50 "$SERVER_DIR/sluiced.log" >&2 || true; }
	die "yarn adapter tests failed"
fi
[ "$tests" -gt 0 ] || die "no test ran"
