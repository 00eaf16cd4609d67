#!/usr/bin/env bash
# The Slurm adapter's end-to-end test (make test-slurm): installs munge and Slurm from
# Debian's packages if they are missing, starts a three-node Slurm on 127.0.0.1 in a
# temporary directory (scripts/slurm/setup.sh), runs TestSlurmE2E with SLURM_E2E=1, and
# stops the cluster again, whatever happened.
#
# Environment: SLURM_E2E_KEEP=1 keeps the directory (logs: DIR/log); SLURM_E2E_PORT_BASE
# moves the cluster's ports (see setup.sh); GO_TEST_FLAGS adds flags to go test.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
setup="$here/setup.sh"

if [[ $(id -u) != 0 ]]; then
	echo "e2e: needs root (it installs packages and runs Slurm as root)" >&2
	exit 1
fi

t0=$SECONDS
bash "$setup" install
t_install=$((SECONDS - t0))

dir=$(mktemp -d /tmp/sluice-slurm-e2e.XXXXXX)
cleanup() {
	local rc=$?
	bash "$setup" stop "$dir" || true
	if [[ $rc != 0 ]]; then
		echo "e2e: failed; the last lines of the logs in $dir/log:" >&2
		for f in "$dir"/log/slurmctld.log "$dir"/log/adapter.log "$dir"/log/sluiced.log; do
			[[ -f $f ]] && { echo "== $f" >&2; tail -n 30 "$f" >&2; }
		done
	fi
	if [[ ${SLURM_E2E_KEEP:-} == 1 || $rc != 0 ]]; then
		echo "e2e: kept $dir" >&2
	else
		rm -rf "$dir"
	fi
	exit $rc
}
trap cleanup EXIT

t1=$SECONDS
bash "$setup" start "$dir" >/dev/null
# shellcheck disable=SC1091
source "$dir/env"
t_start=$((SECONDS - t1))

t2=$SECONDS
cd "$root"
# shellcheck disable=SC2086
SLURM_E2E=1 go test -count=1 -v -timeout 5m -run '^TestSlurmE2E$' ${GO_TEST_FLAGS:-} ./clients/adapters/slurm/
t_test=$((SECONDS - t2))

echo "e2e: install ${t_install}s, cluster start ${t_start}s, test ${t_test}s, total $((SECONDS - t0))s"
