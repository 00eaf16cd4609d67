#!/usr/bin/env bash
# The Sluice scheduler inside a real YARN (make test-yarn):
#
#   1. installs the Java client (clients/java) and the YARN-style adapter (clients/adapters/yarn)
#      into the local Maven repository (mvn -q -B install -DskipTests), which this module
#      depends on by their coordinates (skipped with SLUICE_JAVA_CLIENT_INSTALLED=1 for the
#      client);
#   2. builds sluiced; the tests start it themselves on free loopback ports (and restart it),
#      from SLUICED_BIN;
#   3. runs mvn package here: Maven fetches Hadoop 3.4.2 from Maven Central, the tests run a
#      MiniYARNCluster (a ResourceManager with SluiceResourceScheduler, three NodeManagers)
#      and distributed-shell applications, and the shaded jar for real RMs is built
#      (target/sluice-yarn-rm-0.1.0-all.jar);
#   4. prints "yarn-rm: N passed, N failed" from Surefire's reports;
#   5. loads the shaded jar as a real RM would (src/jarcheck/LoadScheduler.java: Hadoop's jars
#      and the jar only, yarn.resourcemanager.scheduler.class, init and start against a
#      sluiced) and checks that sluiced received the scheduler's queues.
#
# Environment: YARN_RM_TEST=Class[#method] runs some tests only (mvn -Dtest); MVN_OFFLINE=1
# adds -o. Needs Go, Java 17+ with Maven 3.8+, python3, and Maven Central (or a warm ~/.m2).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'yarn-rm/run-tests.sh: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is not installed: $2"; }
nocolor() { sed $'s/\x1b\\[[0-9;]*m//g'; }

need go "install Go"
need mvn "install Maven 3.8+ and a JDK 17+"
need java "install a JDK 17+"
need python3 "install Python 3"

MVN=(mvn -B)
[ "${MVN_OFFLINE:-}" != 1 ] || MVN+=(-o)

start=$SECONDS
BIN_DIR=$(mktemp -d)
trap 'rm -rf "$BIN_DIR"' EXIT

if [ "${SLUICE_JAVA_CLIENT_INSTALLED:-}" = 1 ]; then
	log "java client: already installed in the local Maven repository"
else
	log "java client: mvn install"
	(cd "$ROOT/clients/java" && set -o pipefail && "${MVN[@]}" -q install -DskipTests 2>&1 | nocolor) ||
		die "installing clients/java failed"
fi
log "yarn adapter: mvn install"
(cd "$ROOT/clients/adapters/yarn" && set -o pipefail && "${MVN[@]}" -q install -DskipTests 2>&1 | nocolor) ||
	die "installing clients/adapters/yarn failed"

log "building sluiced"
(cd "$ROOT" && go build -o "$BIN_DIR/sluiced" ./cmd/sluiced) >&2
export SLUICED_BIN=$BIN_DIR/sluiced
export SLUICE_REQUIRE_SERVERS=1

log "yarn-rm: mvn package (MiniYARNCluster tests, then the shaded jar)"
rm -rf "$HERE/target/surefire-reports" "$HERE/target/it"
args=(-q package)
[ -z "${YARN_RM_TEST:-}" ] || args+=("-Dtest=$YARN_RM_TEST")
status=0
(cd "$HERE" && set -o pipefail && "${MVN[@]}" "${args[@]}" 2>&1 | nocolor) || status=$?

read -r tests failures errors skipped < <(python3 "$ROOT/scripts/surefire-totals.py" "$HERE/target/surefire-reports")
failed=$((failures + errors))
echo "yarn-rm build and tests took $((SECONDS - start))s"
echo "yarn-rm: $((tests - failed - skipped)) passed, $failed failed, $skipped skipped"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then
	for f in "$HERE"/target/surefire-reports/*-output.txt; do
		[ -f "$f" ] || continue
		log "last lines of $f:"
		grep -E 'SluiceResourceScheduler|Client:|ERROR' "$f" | tail -n 40 >&2 || true
	done
	[ ! -f "$HERE/target/it/sluiced.log" ] || { log "sluiced log:"; tail -n 30 "$HERE/target/it/sluiced.log" >&2; }
	die "yarn-rm tests failed"
fi
[ "$tests" -gt 0 ] || die "no test ran"
[ "$skipped" -eq 0 ] || die "$skipped tests were skipped"
jar=$HERE/target/sluice-yarn-rm-0.1.0-all.jar
[ -f "$jar" ] || die "no shaded jar at $jar"
listing=$(unzip -l "$jar")
for want in io/github/sluicesched/sluice/yarn/rm/SluiceResourceScheduler.class \
	io/github/sluicesched/sluice/yarn/SluiceYarnScheduler.class \
	io/github/sluicesched/shaded/io/grpc/ManagedChannel.class \
	io/github/sluicesched/shaded/com/google/protobuf/Message.class; do
	grep -qF "$want" <<<"$listing" || die "the shaded jar has no $want"
done

# The jar as a ResourceManager loads it: Hadoop's jars (the module's provided dependencies,
# without the Sluice client, gRPC and protobuf that the jar carries relocated) and the jar,
# against a sluiced of its own, which must then hold the scheduler's queues.
log "yarn-rm: loading the shaded jar on a ResourceManager's classpath"
(cd "$HERE" && "${MVN[@]}" -q dependency:build-classpath -Dmdep.includeScope=provided \
	-Dmdep.outputFile="$BIN_DIR/provided.txt" 2>&1 | nocolor) >&2 || die "listing Hadoop's jars failed"
rmcp=$(tr ':' '\n' <"$BIN_DIR/provided.txt" |
	grep -v -E '/io/github/sluice-sched/|/io/grpc/|/com/google/protobuf/protobuf-java/|/proto-google-common-protos/' |
	paste -sd: -)
(cd "$ROOT" && go build -o "$BIN_DIR/sluicectl" ./cmd/sluicectl) >&2
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
grpc=$(port)
"$SLUICED_BIN" --listen "127.0.0.1:$grpc" --admin-listen "127.0.0.1:$(port)" --log-level warn >"$BIN_DIR/sluiced.log" 2>&1 &
sluiced_pid=$!
trap 'kill "$sluiced_pid" 2>/dev/null || true; rm -rf "$BIN_DIR"' EXIT
for _ in $(seq 50); do "$BIN_DIR/sluicectl" --server "127.0.0.1:$grpc" get clusters >/dev/null 2>&1 && break; sleep 0.2; done
out=$(java -cp "$rmcp:$jar" "$HERE/src/jarcheck/LoadScheduler.java" \
	io.github.sluicesched.sluice.yarn.rm.SluiceResourceScheduler "127.0.0.1:$grpc" 2>"$BIN_DIR/load.err") || {
	grep -v -E '^SLF4J|^\s+at ' "$BIN_DIR/load.err" | tail -n 20 >&2
	die "a ResourceManager's classpath cannot load and start the scheduler from $jar"
}
grep -qF "from file:$jar" <<<"$out" || die "the scheduler was not loaded from the shaded jar: $out"
queues=$("$BIN_DIR/sluicectl" --server "127.0.0.1:$grpc" --cluster yarn get queues 2>&1) ||
	die "sluiced has no queues from the scheduler: $queues"
grep -q -w default <<<"$queues" || die "sluiced does not have the scheduler's default queue: $queues"
kill "$sluiced_pid"; wait "$sluiced_pid" 2>/dev/null || true
echo "yarn-rm: RM jar $jar (loaded and started from Hadoop's jars and the jar alone)"
