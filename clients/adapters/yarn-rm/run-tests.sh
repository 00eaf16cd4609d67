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
#   4. prints "yarn-rm: N passed, N failed" from Surefire's reports.
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
echo "yarn-rm: RM jar $jar"
