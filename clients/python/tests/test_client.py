"""Tests of the Python client. The builders need nothing; the rest needs a sluiced
whose gRPC address is in SLUICE_SERVER, and one that wants the bearer token
SLUICE_TOKEN in SLUICE_TOKEN_SERVER (scripts/clients.sh starts both)."""

import os
import unittest

import grpc

from sluice import SluiceClient, binds, delete, job, node, task
from sluice.v1 import types_pb2

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
