"""Tests of the Python client. The builders need nothing; the rest needs a sluiced
whose gRPC address is in SLUICE_SERVER, and one that wants the bearer token
SLUICE_TOKEN in SLUICE_TOKEN_SERVER (scripts/clients.sh starts both)."""

import os
import unittest

import grpc

from sluice import SluiceClient, binds, delete, error_info, error_reason, full_name, job, node, outcomes, task
from sluice.v1 import scheduler_pb2, types_pb2

SERVER = os.environ.get("SLUICE_SERVER")
TOKEN_SERVER = os.environ.get("SLUICE_TOKEN_SERVER")
TOKEN = os.environ.get("SLUICE_TOKEN")
if os.environ.get("SLUICE_REQUIRE_SERVERS") and not (SERVER and TOKEN_SERVER and TOKEN):
    # scripts/clients.sh sets this: there, a test skipped for want of a server is a failure.
    raise RuntimeError("SLUICE_REQUIRE_SERVERS is set but SLUICE_SERVER, SLUICE_TOKEN_SERVER or SLUICE_TOKEN is not")


class BuilderTest(unittest.TestCase):
    def test_node(self):
        d = node("n1", {"cpu": "8"}, labels={"zone": "a"})
        self.assertEqual(d.WhichOneof("change"), "upsert_node")
        self.assertEqual(d.upsert_node.allocatable["cpu"], "8")
        self.assertEqual(d.upsert_node.labels["zone"], "a")

    def test_job_and_task(self):
        self.assertEqual(job("j", min_available=3, queue="q").upsert_job.min_available, 3)
        t = task("t", "j", {"cpu": "1"}, status=types_pb2.TASK_STATUS_RUNNING, node="n1")
        self.assertEqual((t.upsert_task.job, t.upsert_task.node), ("j", "n1"))

    def test_delete(self):
        d = delete("task", "t", namespace="ns")
        self.assertEqual(d.delete.kind, types_pb2.OBJECT_KIND_TASK)
        with self.assertRaises(ValueError):
            delete("pod", "p")

    def test_full_name(self):
        self.assertEqual(full_name(types_pb2.TaskRef(namespace="team", name="etl/a")), "team/etl/a")
        self.assertEqual(full_name(types_pb2.JobRef(name="j")), "default/j")
        self.assertEqual(full_name(types_pb2.TaskRef()), "")
        self.assertEqual(full_name(None), "")


@unittest.skipUnless(SERVER, "SLUICE_SERVER is not set")
class ServerTest(unittest.TestCase):
    def setUp(self):
        self.c = SluiceClient(SERVER, cluster="py-" + self.id().rsplit(".", 1)[-1].replace("_", "-"))
        self.addCleanup(self.c.close)

    def test_round_trip(self):
        self.c.apply(
            [node("n1", {"cpu": "4", "memory": "8Gi"}), job("j", min_available=2),
             task("j-0", "j", {"cpu": "1"}), task("j-1", "j", {"cpu": "1"})],
            replace_all=True,
        )
        dry = self.c.schedule("dry_run")
        self.assertEqual(binds(dry.decisions), {"default/j-0": "n1", "default/j-1": "n1"})
        plan = self.c.schedule()
        resp = self.c.commit(plan)
        self.assertEqual(binds(resp.applied), {"default/j-0": "n1", "default/j-1": "n1"})
        bound = {t.name: t.node for t in self.c.tasks(job="j")}
        self.assertEqual(bound, {"j-0": "n1", "j-1": "n1"})
        self.assertEqual([n.name for n in self.c.nodes()], ["n1"])

    def test_references_and_closed_sets(self):
        # n1 is tainted; only the task that tolerates the taint may go there.
        self.c.apply(
            [
                node("n1", {"cpu": "4"}, taints=[types_pb2.Taint(key="dedicated", value="gpu",
                                                                 effect=types_pb2.TAINT_EFFECT_NO_SCHEDULE)]),
                job("gpu", namespace="team"),
                task("gpu-0", "gpu", {"cpu": "1"}, namespace="team",
                     tolerations=[types_pb2.Toleration(key="dedicated", value="gpu")]),  # operator: EQUAL
                job("plain"),
                task("plain-0", "plain", {"cpu": "1"}),
            ],
            replace_all=True,
        )
        dry = self.c.schedule("dry_run")
        self.assertEqual(len(dry.decisions), 1)
        bind = dry.decisions[0].bind
        self.assertEqual(bind.task, types_pb2.TaskRef(namespace="team", name="gpu-0"))
        self.assertEqual(bind.job, types_pb2.JobRef(namespace="team", name="gpu"))
        self.assertEqual({full_name(o.job) for o in dry.jobs}, {"team/gpu", "default/plain"})
        self.assertEqual(self.c.explain("plain").outcome.job, types_pb2.JobRef(namespace="default", name="plain"))

        self.assertEqual(next(self.c.nodes()).taints[0].effect, types_pb2.TAINT_EFFECT_NO_SCHEDULE)
        tol = next(self.c.tasks(job="gpu", namespace="team")).tolerations[0]
        self.assertEqual((tol.operator, tol.effect),
                         (types_pb2.TOLERATION_OPERATOR_EQUAL, types_pb2.TAINT_EFFECT_UNSPECIFIED))

        # A taint must say its effect.
        with self.assertRaises(grpc.RpcError) as cm:
            self.c.apply([node("n2", {"cpu": "1"}, taints=[types_pb2.Taint(key="k")])])
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("taints[0].effect", cm.exception.details())

    def test_gang_that_does_not_fit(self):
        self.c.apply(
            [node("n1", {"cpu": "1"}), job("big", min_available=2),
             task("big-0", "big", {"cpu": "1"}), task("big-1", "big", {"cpu": "1"})],
            replace_all=True,
        )
        plan = self.c.schedule()
        self.assertEqual(binds(plan.decisions), {})
        self.c.discard(plan)
        ex = self.c.explain("big")
        self.assertEqual(ex.outcome.ready, 0)
        self.assertTrue(ex.outcome.explanation.summary)

    def test_invalid_argument(self):
        with self.assertRaises(grpc.RpcError) as cm:
            self.c.apply([node("bad", {"cpu": "lots"})])
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("allocatable", cm.exception.details())

    def test_watch_plans(self):
        self.c.apply([node("n1", {"cpu": "4"}), job("w", min_available=1), task("w-0", "w", {"cpu": "1"})],
                     replace_all=True)
        for plan in self.c.watch_plans("dry_run", period_seconds=0.2):
            self.assertEqual(binds(plan.decisions), {"default/w-0": "n1"})
            break

    def test_bad_mode(self):
        with self.assertRaises(ValueError):
            self.c.schedule("eventually")

    def test_commit_discarded_plan(self):
        self.c.apply([node("n1", {"cpu": "4"}), job("d", min_available=1), task("d-0", "d", {"cpu": "1"})],
                     replace_all=True)
        plan = self.c.schedule()
        self.c.discard(plan)
        with self.assertRaises(grpc.RpcError) as cm:
            self.c.commit(plan)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(error_reason(cm.exception), "PLAN_DISCARDED")
        self.assertEqual(error_info(cm.exception).domain, "sluice.sched")
        # The discarded plan is only its summary now.
        self.assertEqual(self.c.get_plan(plan.id).state, scheduler_pb2.PLAN_STATE_DISCARDED)

    def test_error_reasons(self):
        # A cluster nothing created is not found; once a batch created it, its plans are.
        with self.assertRaises(grpc.RpcError) as cm:
            self.c.get_plan("no-such-plan")
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertEqual(error_reason(cm.exception), "CLUSTER_NOT_FOUND")
        self.c.apply([node("n1", {"cpu": "1"})], replace_all=True)
        with self.assertRaises(grpc.RpcError) as cm:
            self.c.get_plan("no-such-plan")
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertEqual(error_reason(cm.exception), "PLAN_NOT_FOUND")
        with self.assertRaises(grpc.RpcError) as cm:
            self.c.apply([node("bad", {"cpu": "lots"})])
        self.assertEqual(error_reason(cm.exception), "INVALID_FIELD")
        self.assertIsNone(error_reason(ValueError("not an RPC error")))


@unittest.skipUnless(SERVER, "SLUICE_SERVER is not set")
class LargePlanTest(unittest.TestCase):
    """A plan of more decisions than one page holds (the server sends 1000 at a time): 2,500
    single-task jobs on one big node."""

    N = 2500

    def setUp(self):
        self.c = SluiceClient(SERVER, cluster="py-large-" + self.id().rsplit(".", 1)[-1].replace("_", "-"),
                              timeout=120)
        self.addCleanup(self.c.close)
        deltas = [node("n1", {"cpu": "10000", "memory": "10000Gi", "pods": "10000"})]
        for i in range(self.N):
            name = f"j{i:04d}"
            deltas += [job(name, min_available=1), task(name + "-0", name, {"cpu": "1", "memory": "1Gi"})]
        self.c.apply(deltas, replace_all=True)

    def assert_whole(self, plan):
        self.assertEqual(len(plan.decisions), self.N)
        self.assertEqual(len(plan.jobs), self.N)
        self.assertEqual(plan.counts.binds, self.N)
        self.assertEqual(len({full_name(d.bind.task) for d in plan.decisions}), self.N)
        self.assertEqual([full_name(o.job) for o in plan.jobs], sorted(f"default/j{i:04d}" for i in range(self.N)))

    def test_schedule_and_get_plan_read_every_page(self):
        dry = self.c.schedule("dry_run")
        self.assert_whole(dry)
        self.assertEqual(dry.state, scheduler_pb2.PLAN_STATE_DRY_RUN)
        again = self.c.get_plan(dry)
        self.assert_whole(again)
        self.assertEqual(list(again.decisions), list(dry.decisions))

    def test_commit_covers_the_whole_plan(self):
        plan = self.c.schedule()
        self.assert_whole(plan)
        # A change to a task whose bind is on the last page: the commit rejects that decision,
        # and only the committed record (not the first page's lists) can say so.
        victim = full_name(plan.decisions[-1].bind.task)
        ref = plan.decisions[-1].bind.task
        self.c.apply([delete("task", ref.name, namespace=ref.namespace)])
        resp = self.c.commit(plan)
        self.assertEqual(len(resp.applied), self.N - 1)
        self.assertEqual([full_name(r.decision.bind.task) for r in resp.rejected], [victim])
        self.assertTrue(resp.rejected[0].reason)
        self.assertFalse(resp.next_page_token)
        self.assertEqual(len(resp.plan.decisions), self.N)
        self.assertEqual(resp.plan.state, scheduler_pb2.PLAN_STATE_COMMITTED)
        self.assertEqual((resp.plan.counts.applied, resp.plan.counts.rejected), (self.N - 1, 1))
        self.assertNotIn(victim, binds(resp.applied))

        record = self.c.get_plan(plan.id)
        self.assertEqual(len(record.decisions), self.N)
        applied, rejected = outcomes(record)
        self.assertEqual((len(applied), [full_name(r.decision.bind.task) for r in rejected]), (self.N - 1, [victim]))
        self.assertTrue(all(d.outcome == scheduler_pb2.DECISION_OUTCOME_APPLIED for d in applied))

        # Committing again answers the same, whole.
        again = self.c.commit(plan)
        self.assertEqual(again.revision, resp.revision)
        self.assertEqual((len(again.applied), len(again.rejected)), (self.N - 1, 1))
        self.assertEqual(sum(1 for t in self.c.tasks() if t.node == "n1"), self.N - 1)


@unittest.skipUnless(TOKEN_SERVER and TOKEN, "SLUICE_TOKEN_SERVER and SLUICE_TOKEN are not set")
class TokenTest(unittest.TestCase):
    def call(self, token):
        with SluiceClient(TOKEN_SERVER, cluster="py-token", token=token) as c:
            return c.apply([node("n1", {"cpu": "1"})], replace_all=True)

    def test_right_token(self):
        self.assertGreater(self.call(TOKEN), 0)

    def test_no_or_wrong_token(self):
        for token in (None, TOKEN + "-wrong"):
            with self.assertRaises(grpc.RpcError) as cm:
                self.call(token)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAUTHENTICATED, token)


if __name__ == "__main__":
    unittest.main()
