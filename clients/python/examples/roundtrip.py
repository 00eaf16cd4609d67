#!/usr/bin/env python3
"""Round trip against a running sluiced: stream a node and a gang job of two tasks,
schedule, commit, and check that both tasks were bound to the node.

    python examples/roundtrip.py --server 127.0.0.1:50051

Exits 0 when the plan is as expected, 1 otherwise.
"""

import argparse
import sys

from sluice import SluiceClient, binds, full_name, job, node, task


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="127.0.0.1:50051", help="sluiced gRPC address, HOST:PORT")
    ap.add_argument("--cluster", default="roundtrip-python", help="cluster to use (it is replaced)")
    ap.add_argument("--token", default=None, help="bearer token, if the server wants one")
    args = ap.parse_args()

    want = {"default/rt-0": "n1", "default/rt-1": "n1"}
    with SluiceClient(args.server, cluster=args.cluster, token=args.token) as c:
        rev = c.apply(
            [
                node("n1", {"cpu": "8", "memory": "32Gi", "pods": "110"}),
                job("rt", min_available=2),
                task("rt-0", "rt", {"cpu": "2", "memory": "1Gi"}),
                task("rt-1", "rt", {"cpu": "2", "memory": "1Gi"}),
            ],
            replace_all=True,
        )
        print(f"applied the cluster at revision {rev}")

        plan = c.schedule()
        print(f"plan {plan.id} at revision {plan.base_revision}: {len(plan.decisions)} decisions")
        proposed = binds(plan.decisions)
        if proposed != want:
            print(f"FAIL: proposed binds {proposed}, want {want}", file=sys.stderr)
            c.discard(plan)
            return 1

        resp = c.commit(plan)
        applied = binds(resp.applied)
        print(f"committed at revision {resp.revision}: {applied}")
        if applied != want or resp.rejected:
            print(f"FAIL: applied binds {applied} (rejected {list(resp.rejected)}), want {want}", file=sys.stderr)
            return 1

        outcome = c.explain("rt").outcome
        print(f"job {full_name(outcome.job)}: {outcome.ready} ready of {outcome.min_available}")
        if outcome.ready != 2:
            print(f"FAIL: job ready {outcome.ready}, want 2", file=sys.stderr)
            return 1
    print("PASS python round trip")
    return 0


if __name__ == "__main__":
    sys.exit(main())
