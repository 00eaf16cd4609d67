#!/usr/bin/env bash
# bench-goals.sh runs every workload of issue 15's goals in one block, a *before* build
# alternating with the current tree's, and the full-scan floor after each W1 pair, so that
# every ratio in BENCHMARKS.md "Results against the goals" comes from one run on one machine.
#
#   scripts/bench-goals.sh BEFORE_COMMIT [SHARED_DIR]   > goals.txt
#
# BEFORE_COMMIT is built from `git archive` into a scratch directory; SHARED_DIR is the
# directory holding bench/floor and bench/w1-config.yaml (default ../shared). Each output line
# is the time, the 1-minute load average, the measure, the build and sluicectl's summary line.
set -euo pipefail
before=${1:?usage: scripts/bench-goals.sh BEFORE_COMMIT [SHARED_DIR]}
top=$(git rev-parse --show-toplevel)
shared=$(cd "${2:-$top/../shared}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir "$work/before"
git -C "$top" archive "$before" | tar -x -C "$work/before"
(cd "$work/before" && go build -o "$work/sl-before" ./cmd/sluicectl)
(cd "$top" && go build -o "$work/sl-after" ./cmd/sluicectl)
(cd "$shared/bench/floor" && go build -o "$work/floor" .)
cd "$work"

log() { echo "$(date +%T) load=$(cut -d' ' -f1 /proc/loadavg) $*"; }
run() { # run MEASURE BUILD ARGS...
	local m=$1 b=$2
	shift 2
	log "$m $b $("./sl-$b" bench "$@" 2>&1 | tail -1)"
}
both() { # both MEASURE ARGS...: before, then after
	local m=$1
	shift
	run "$m" before "$@"
	run "$m" after "$@"
}

w1=(--nodes 1000 --jobs 1000 --tasks-per-job 10 --queues 1 --shapes uniform --config "$shared/bench/w1-config.yaml")
for _ in 1 2 3 4 5; do
	both w1 "${w1[@]}"
	log "floor $(./floor 2>&1 | tail -1)"
done
for _ in 1 2; do
	for b in before after; do
		run idle1k "$b" --workload steady-idle --nodes 1000 --jobs 900 --cycles 20
		run idle10k "$b" --workload steady-idle --nodes 10000 --jobs 9000 --cycles 20
	done
done
for _ in 1 2; do
	both arrivals --workload steady-arrivals --nodes 10000 --jobs 9000 --arrivals 100 --cycles 7
done
both watch --workload steady-arrivals --watch --nodes 2000 --jobs 2000 --arrivals 1 --cycles 20
for _ in 1 2; do
	for b in before after; do
		run preempt "$b" --workload preempt --nodes 1000 --arrivals 200 --cycles 5
		run reclaim "$b" --workload reclaim --nodes 1000 --arrivals 200 --cycles 5
	done
done
for _ in 1 2; do
	both w2 --nodes 5000 --jobs 5000 --tasks-per-job 10 --queues 20 --shapes mixed
done
for b in before after; do
	run bigjob "$b" --workload big-job --nodes 10000 --tasks-per-job 100000 --cycles 3
	run pending10k "$b" --workload pending --nodes 10000 --jobs 10000 --tasks-per-job 10 --cycles 3
done
both big50k --nodes 50000 --jobs 50000 --tasks-per-job 10 --cycles 1
(cd "$work/before" && go test -c -o "$work/svc-before.test" ./service/)
(cd "$top" && go test -c -o "$work/svc-after.test" ./service/)
# In-process: 20 runs, so that the gc=sluiced variant (sluiced's collector policy, measured
# after its warm-up) includes its collections (gc/op).
for _ in 1 2 3; do
	for b in before after; do
		log "sync $b $(cd "$top/service" && "$work/svc-$b.test" -test.run '^$' -test.bench SyncIngest -test.benchtime 20x 2>&1 | grep '^Benchmark' | tr -s ' \t' ' ' | paste -sd ' ')"
	done
done
# A real sluiced of each build with its defaults, the same client (bench ingest of this tree);
# 8 rounds first fill the heap (a fresh process faults in every page it touches first).
(cd "$work/before" && go build -o "$work/sd-before" ./cmd/sluiced)
(cd "$top" && go build -o "$work/sd-after" ./cmd/sluiced)
for _ in 1 2; do
	for b in before after; do
		"./sd-$b" --listen 127.0.0.1:50951 --admin-listen 127.0.0.1:50952 --log-level warn 2>/dev/null &
		pid=$!
		sleep 2
		log "ingest $b $(./sl-after --server 127.0.0.1:50951 bench ingest --warmup 8 --rounds 10 2>&1 | tail -1) rss_kib=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)"
		kill "$pid"
		wait "$pid" || true
	done
done
