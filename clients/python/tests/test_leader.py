"""Tests of leader following. The decision logic runs without a server, against fake
errors and channels; the client's calls and streams run against tiny in-process members
that answer as a follower would; the rest needs a replicated sluiced whose members' gRPC
addresses are in SLUICE_REPLICAS (comma-separated) and a follower's in
SLUICE_REPLICA_FOLLOWER (scripts/clients.sh starts one)."""

import os
import socket
import threading
import time
import unittest
from concurrent import futures

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from sluice import LeaderChannel, SluiceClient, error_reason, leader_of, node
from sluice.v1 import cluster_state_pb2, cluster_state_pb2_grpc, reads_pb2, scheduler_pb2, types_pb2

REPLICAS = [a for a in os.environ.get("SLUICE_REPLICAS", "").split(",") if a]
FOLLOWER = os.environ.get("SLUICE_REPLICA_FOLLOWER")
if os.environ.get("SLUICE_REQUIRE_SERVERS") and not (REPLICAS and FOLLOWER):
    # scripts/clients.sh sets this: there, a test skipped for want of a server is a failure.
    raise RuntimeError("SLUICE_REQUIRE_SERVERS is set but SLUICE_REPLICAS or SLUICE_REPLICA_FOLLOWER is not")

UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
STALE = reads_pb2.ReadOptions(consistency=reads_pb2.READ_CONSISTENCY_STALE)


def rich_status(code, reason=None, metadata=None):
    """A grpc.Status as a Sluice server sends it: with an ErrorInfo of domain sluice.sched
    when reason is given."""
    details = []
    if reason is not None:
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(domain="sluice.sched", reason=reason, metadata=metadata or {}))
        details.append(detail)
    return rpc_status.to_status(status_pb2.Status(code=code.value[0], message=f"{code.name} {reason}",
                                                  details=details))


class FakeError(grpc.RpcError):
    """What a failed call raises, enough for error_info and leader_of."""

    def __init__(self, code, reason=None, metadata=None):
        self._status = rich_status(code, reason, metadata)

    def code(self):
        return self._status.code

    def details(self):
        return self._status.details

    def trailing_metadata(self):
        return self._status.trailing_metadata


class FakeChannel:
    def __init__(self, address):
        self.address = address
        self.closed = False

    def close(self):
        self.closed = True


class DecisionTest(unittest.TestCase):
    """LeaderChannel.observe's rules, on fake channels."""

    def setUp(self):
        self.opened = []

        def open_channel(address):
            self.opened.append(FakeChannel(address))
            return self.opened[-1]

        self.lc = LeaderChannel("a:1", ["b:1", "a:1", "c:1", "b:1"], open_channel)

    def test_members_keep_order_without_repeats(self):
        self.assertEqual(self.lc.members, ("a:1", "b:1", "c:1"))
        self.assertEqual(self.lc.target, "a:1")
        self.assertEqual([c.address for c in self.opened], ["a:1"])
        with self.assertRaises(TypeError):
            LeaderChannel("a:1", "b:1", FakeChannel)

    def test_not_leader_naming_a_leader_moves_there(self):
        first = self.lc.current()
        self.assertTrue(self.lc.observe(first, FakeError(UNAVAILABLE, "NOT_LEADER", {"leader": "z:9"})))
        self.assertEqual(self.lc.target, "z:9")  # not a member: still followed
        self.assertEqual(self.lc.current().address, "z:9")
        # z:9 names b:1, b:1 names z:9 again: the channel to z:9 is reused.
        self.assertTrue(self.lc.observe(self.lc.current(), FakeError(UNAVAILABLE, "NOT_LEADER", {"leader": "b:1"})))
        self.assertTrue(self.lc.observe(self.lc.current(), FakeError(UNAVAILABLE, "NOT_LEADER", {"leader": "z:9"})))
        self.assertEqual([c.address for c in self.opened], ["a:1", "z:9", "b:1"])
        # A transport failure on a leader outside the list moves to the first member.
        self.assertFalse(self.lc.observe(self.lc.current(), FakeError(UNAVAILABLE)))
        self.assertIs(self.lc.current(), first)

    def test_not_leader_without_a_leader_stays(self):
        err = FakeError(UNAVAILABLE, "NOT_LEADER")
        self.assertIsNone(leader_of(err))
        self.assertFalse(self.lc.observe(self.lc.current(), err))
        self.assertFalse(self.lc.observe(self.lc.current(), FakeError(UNAVAILABLE, "NOT_LEADER", {"leader": ""})))
        self.assertEqual(self.lc.target, "a:1")

    def test_reasons_that_rotate(self):
        for err in (FakeError(UNAVAILABLE), FakeError(UNAVAILABLE, "STORE_UNAVAILABLE"),
                    FakeError(UNAVAILABLE, "STALE_READ_REFUSED")):
            before = self.lc.target
            self.assertFalse(self.lc.observe(self.lc.current(), err))  # never sent again
            self.assertNotEqual(self.lc.target, before, err.details())
        self.assertEqual(self.lc.target, "a:1")  # a -> b -> c -> a: round robin

    def test_reasons_that_do_not_rotate(self):
        for err in (FakeError(UNAVAILABLE, "SOMETHING_NEW"), FakeError(grpc.StatusCode.FAILED_PRECONDITION,
                                                                         "STORE_UNAVAILABLE"),
                    FakeError(grpc.StatusCode.DEADLINE_EXCEEDED), FakeError(grpc.StatusCode.NOT_FOUND,
                                                                             "CLUSTER_NOT_FOUND"),
                    ValueError("not an RPC error")):
            self.assertFalse(self.lc.observe(self.lc.current(), err))
            self.assertEqual(self.lc.target, "a:1", str(err))

    def test_one_member_does_not_rotate(self):
        lc = LeaderChannel("a:1", [], FakeChannel)
        self.assertFalse(lc.observe(lc.current(), FakeError(UNAVAILABLE)))
        self.assertEqual(lc.target, "a:1")

    def test_a_second_call_follows_the_first_move(self):
        used = self.lc.current()  # two calls both used a:1 and failed
        self.lc.observe(used, FakeError(UNAVAILABLE, "STORE_UNAVAILABLE"))
        self.lc.observe(used, FakeError(UNAVAILABLE, "STORE_UNAVAILABLE"))
        self.assertEqual(self.lc.target, "b:1")  # not c:1
        # A NOT_LEADER seen on the old channel: send it again where the calls went.
        self.assertTrue(self.lc.observe(used, FakeError(UNAVAILABLE, "NOT_LEADER", {"leader": "c:1"})))
        self.assertEqual(self.lc.target, "b:1")

    def test_concurrent_failures_move_once(self):
        used = self.lc.current()
        barrier = threading.Barrier(8)

        def fail():
            barrier.wait()
            self.lc.observe(used, FakeError(UNAVAILABLE))

        threads = [threading.Thread(target=fail) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(self.lc.target, "b:1")
        self.assertEqual([c.address for c in self.opened], ["a:1", "b:1"])

    def test_close_closes_every_channel(self):
        self.lc.observe(self.lc.current(), FakeError(UNAVAILABLE))
        self.lc.close()
        self.assertEqual([(c.address, c.closed) for c in self.opened], [("a:1", True), ("b:1", True)])
        self.assertFalse(self.lc.observe(self.lc.current(), FakeError(UNAVAILABLE, "NOT_LEADER", {"leader": "c:1"})))
        self.assertEqual(len(self.opened), 2)


class Member:
    """An in-process server answering ApplyDeltas, ListNodes and WatchPlans with
    ``answer()``: None for success, else a grpc.Status to abort with. It records each
    call's metadata in ``calls`` and its request in ``requests``. ApplyDeltas answers the
    number of calls as the revision, ListNodes ``list_revision``."""

    def __init__(self, answer=None):
        self.answer = answer or (lambda: None)
        self.calls = []
        self.requests = []
        self.list_revision = 0
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers([
            grpc.method_handlers_generic_handler("sluice.v1.ClusterStateService", {
                "ApplyDeltas": grpc.unary_unary_rpc_method_handler(
                    self.apply, cluster_state_pb2.ApplyDeltasRequest.FromString,
                    cluster_state_pb2.ApplyDeltasResponse.SerializeToString),
                "ListNodes": grpc.unary_unary_rpc_method_handler(
                    self.list_nodes, cluster_state_pb2.ListNodesRequest.FromString,
                    cluster_state_pb2.ListNodesResponse.SerializeToString),
            }),
            grpc.method_handlers_generic_handler("sluice.v1.SchedulerService", {
                "WatchPlans": grpc.unary_stream_rpc_method_handler(
                    self.watch, scheduler_pb2.WatchPlansRequest.FromString,
                    scheduler_pb2.WatchPlansResponse.SerializeToString),
            }),
        ])
        self.address = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        self.server.start()

    def _serve(self, request, context):
        self.requests.append(request)
        self.calls.append(dict(context.invocation_metadata()))
        status = self.answer()
        if status is not None:
            context.abort_with_status(status)

    def apply(self, request, context):
        self._serve(request, context)
        return cluster_state_pb2.ApplyDeltasResponse(revision=len(self.calls))

    def list_nodes(self, request, context):
        self._serve(request, context)
        return cluster_state_pb2.ListNodesResponse(revision=self.list_revision)

    def watch(self, request, context):
        self._serve(request, context)
        yield scheduler_pb2.WatchPlansResponse(plan=scheduler_pb2.Plan(id=self.address))

    def stop(self):
        self.server.stop(None)


def not_leader(leader=None):
    return lambda: rich_status(UNAVAILABLE, "NOT_LEADER", {"leader": leader} if leader else {})


def dead_address():
    """A loopback address nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"127.0.0.1:{port}"


class InProcessTest(unittest.TestCase):
    """The client's methods, raw stubs and streams against in-process members."""

    def member(self, answer=None):
        m = Member(answer)
        self.addCleanup(m.stop)
        return m

    def client(self, target, **kwargs):
        c = SluiceClient(target, cluster="c", timeout=10, **kwargs)
        self.addCleanup(c.close)
        return c

    def test_follows_not_leader_and_stays(self):
        leader = self.member()
        follower = self.member(not_leader(leader.address))
        c = self.client(follower.address, token="tok", options=[("grpc.primary_user_agent", "leader-test")])
        self.assertEqual(c.apply([node("n1", {"cpu": "1"})]), 1)
        self.assertEqual(c.current_member, leader.address)
        self.assertEqual(c.apply([node("n1", {"cpu": "1"})]), 2)
        self.assertEqual((len(follower.calls), len(leader.calls)), (1, 2))
        # The leader's channel has the first one's options, and the calls their token.
        self.assertEqual(leader.calls[0]["authorization"], "Bearer tok")
        self.assertTrue(leader.calls[0]["user-agent"].startswith("leader-test"), leader.calls[0]["user-agent"])

    def test_raw_stub_follows(self):
        leader = self.member()
        follower = self.member(not_leader(leader.address))
        c = self.client(follower.address)
        req = cluster_state_pb2.ApplyDeltasRequest(cluster="c", batch=types_pb2.DeltaBatch())
        resp, call = c.state.ApplyDeltas.with_call(req, timeout=10)
        self.assertEqual((resp.revision, call.code()), (1, grpc.StatusCode.OK))
        self.assertEqual(c.state.ApplyDeltas(req).revision, 2)
        self.assertEqual(len(follower.calls), 1)

    def test_not_leader_without_a_leader_is_raised(self):
        follower = self.member(not_leader())
        c = self.client(follower.address, endpoints=[dead_address()])
        with self.assertRaises(grpc.RpcError) as cm:
            c.apply([node("n1", {"cpu": "1"})])
        self.assertEqual((cm.exception.code(), error_reason(cm.exception)), (UNAVAILABLE, "NOT_LEADER"))
        self.assertEqual(len(follower.calls), 1)
        self.assertEqual(c.current_member, follower.address)

    def test_hop_limit(self):
        a = self.member()
        b = self.member(not_leader(a.address))
        a.answer = not_leader(b.address)  # each names the other
        c = self.client(a.address)
        with self.assertRaises(grpc.RpcError) as cm:
            c.apply([node("n1", {"cpu": "1"})])
        self.assertEqual(error_reason(cm.exception), "NOT_LEADER")
        self.assertEqual((len(a.calls), len(b.calls)), (2, 2))  # the call and 3 hops

    def test_store_unavailable_rotates_without_retry(self):
        cut_off = self.member(lambda: rich_status(UNAVAILABLE, "STORE_UNAVAILABLE"))
        other = self.member()
        c = self.client(cut_off.address, endpoints=[other.address])
        with self.assertRaises(grpc.RpcError) as cm:
            c.apply([node("n1", {"cpu": "1"})])
        self.assertEqual(error_reason(cm.exception), "STORE_UNAVAILABLE")
        self.assertEqual((len(cut_off.calls), len(other.calls)), (1, 0))
        self.assertEqual(c.apply([node("n1", {"cpu": "1"})]), 1)
        self.assertEqual(c.members, (cut_off.address, other.address))

    def test_other_errors_neither_retry_nor_rotate(self):
        m = self.member(lambda: rich_status(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_FIELD"))
        other = self.member()
        c = self.client(m.address, endpoints=[other.address])
        for _ in range(2):
            with self.assertRaises(grpc.RpcError) as cm:
                c.apply([node("n1", {"cpu": "1"})])
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual((len(m.calls), len(other.calls)), (2, 0))

    def test_stream_error_moves_later_calls(self):
        leader = self.member()
        follower = self.member(not_leader(leader.address))
        c = self.client(follower.address)
        with self.assertRaises(grpc.RpcError) as cm:
            next(c.watch_plans())
        self.assertEqual(leader_of(cm.exception), leader.address)
        self.assertEqual(c.current_member, leader.address)
        self.assertEqual(next(c.watch_plans()).id, leader.address)
        self.assertEqual(next(iter(c.scheduler.WatchPlans(scheduler_pb2.WatchPlansRequest()))).plan.id,
                         leader.address)

    def test_future_error_moves_later_calls(self):
        leader = self.member()
        follower = self.member(not_leader(leader.address))
        c = self.client(follower.address)
        fut = c.state.ApplyDeltas.future(cluster_state_pb2.ApplyDeltasRequest(cluster="c"), timeout=10)
        self.assertEqual(fut.code(), UNAVAILABLE)  # a future is not sent again
        deadline = time.monotonic() + 5
        while c.current_member != leader.address and time.monotonic() < deadline:
            time.sleep(0.01)  # the done callback may run on another thread
        self.assertEqual(c.current_member, leader.address)


class RevisionFloorTest(unittest.TestCase):
    """Stale reads carry the client's revision floor as min_revision: what the member got."""

    def setUp(self):
        self.m = Member()
        self.addCleanup(self.m.stop)
        self.c = SluiceClient(self.m.address, cluster="c", timeout=10)
        self.addCleanup(self.c.close)

    def write(self, revision, cluster="c"):
        """An ApplyDeltas of ``cluster`` answered with ``revision``."""
        self.m.calls[:] = [{}] * (revision - 1)  # the member answers len(calls) + 1
        self.assertEqual(self.c.apply([node("n1", {"cpu": "1"})], cluster=cluster), revision)

    def list_nodes(self, read=None, cluster="c"):
        """Sends a ListNodes through the raw stub; returns the request the member got."""
        req = cluster_state_pb2.ListNodesRequest(cluster=cluster, read=read)
        sent = cluster_state_pb2.ListNodesRequest()
        sent.CopyFrom(req)
        self.c.state.ListNodes(req, timeout=10)
        self.assertEqual(req, sent)  # the caller's request is never changed
        return self.m.requests[-1]

    def test_no_floor_before_a_write(self):
        self.assertFalse(self.list_nodes(STALE).read.min_revision)
        self.assertEqual(self.c._channel.revision_floor("c"), 0)

    def test_stale_reads_carry_the_floor(self):
        self.write(7)
        self.assertEqual(self.c._channel.revision_floor("c"), 7)
        self.assertEqual(self.list_nodes(STALE).read.min_revision, 7)
        # With a max_staleness too: the rest of the options go as they are.
        got = self.list_nodes(reads_pb2.ReadOptions(consistency=reads_pb2.READ_CONSISTENCY_STALE,
                                                    max_staleness=duration_pb2.Duration(seconds=5)))
        self.assertEqual((got.read.min_revision, got.read.max_staleness.seconds), (7, 5))
        # An explicit min_revision is kept.
        got = self.list_nodes(reads_pb2.ReadOptions(consistency=reads_pb2.READ_CONSISTENCY_STALE, min_revision=3))
        self.assertEqual(got.read.min_revision, 3)

    def test_linearizable_and_unset_reads_are_untouched(self):
        self.write(7)
        got = self.list_nodes(reads_pb2.ReadOptions(consistency=reads_pb2.READ_CONSISTENCY_LINEARIZABLE))
        self.assertEqual(got.read, reads_pb2.ReadOptions(consistency=reads_pb2.READ_CONSISTENCY_LINEARIZABLE))
        self.assertFalse(self.list_nodes().HasField("read"))

    def test_floors_are_per_cluster(self):
        self.write(7)
        self.assertFalse(self.list_nodes(STALE, cluster="other").read.min_revision)
        self.assertEqual(self.c._channel.revision_floor("other"), 0)

    def test_a_read_raises_the_floor_but_never_lowers_it(self):
        self.write(7)
        self.m.list_revision = 9
        self.assertEqual(self.list_nodes(STALE).read.min_revision, 7)
        self.assertEqual(self.list_nodes(STALE).read.min_revision, 9)
        self.m.list_revision = 4  # an older answer does not go back in time
        self.list_nodes(STALE)
        self.assertEqual(self.list_nodes(STALE).read.min_revision, 9)

    def test_with_call_and_future_note_and_apply(self):
        req = cluster_state_pb2.ApplyDeltasRequest(cluster="c")
        self.m.calls[:] = [{}] * 4
        self.assertEqual(self.c.state.ApplyDeltas.with_call(req, timeout=10)[0].revision, 5)
        self.assertEqual(self.c._channel.revision_floor("c"), 5)
        self.assertEqual(self.c.state.ApplyDeltas.future(req, timeout=10).result().revision, 6)
        deadline = time.monotonic() + 5
        while self.c._channel.revision_floor("c") != 6 and time.monotonic() < deadline:
            time.sleep(0.01)  # the done callback may run on another thread
        fut = self.c.state.ListNodes.future(cluster_state_pb2.ListNodesRequest(cluster="c", read=STALE), timeout=10)
        fut.result()
        self.assertEqual(self.m.requests[-1].read.min_revision, 6)

    def test_a_stale_watch_carries_the_floor(self):
        self.write(7)
        req = scheduler_pb2.WatchPlansRequest(cluster="c", read=STALE)
        next(iter(self.c.scheduler.WatchPlans(req)))
        self.assertEqual(self.m.requests[-1].read.min_revision, 7)
        self.assertEqual(req.read.min_revision, 0)

    def test_the_floor_follows_the_leader(self):
        leader = Member()
        self.addCleanup(leader.stop)
        follower = Member(not_leader(leader.address))
        self.addCleanup(follower.stop)
        c = SluiceClient(follower.address, cluster="c", timeout=10)
        self.addCleanup(c.close)
        self.assertEqual(c.apply([node("n1", {"cpu": "1"})]), 1)
        c.state.ListNodes(cluster_state_pb2.ListNodesRequest(cluster="c", read=STALE), timeout=10)
        self.assertEqual(leader.requests[-1].read.min_revision, 1)


class Recorder(grpc.UnaryUnaryClientInterceptor):
    """Records the requests of the unary calls made on the channels it intercepts."""

    def __init__(self):
        self.requests = []

    def intercept_unary_unary(self, continuation, client_call_details, request):
        self.requests.append(request)
        return continuation(client_call_details, request)


@unittest.skipUnless(REPLICAS and FOLLOWER, "SLUICE_REPLICAS or SLUICE_REPLICA_FOLLOWER is not set")
class ReplicatedServerTest(unittest.TestCase):
    """A real three-member sluiced."""

    def setUp(self):
        # Unique to the run, and within a cluster name's 63 characters.
        name = self.id().rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")[:24]
        self.cluster = f"py-leader-{name}-{os.getpid()}-{time.time_ns() % 10**10}"

    def client(self, target, **kwargs):
        c = SluiceClient(target, cluster=self.cluster, **kwargs)
        self.addCleanup(c.close)
        return c

    def test_follower_refuses_and_client_follows(self):
        # The follower itself refuses the write, naming a member as the leader...
        with grpc.insecure_channel(FOLLOWER) as ch:
            with self.assertRaises(grpc.RpcError) as cm:
                cluster_state_pb2_grpc.ClusterStateServiceStub(ch).ApplyDeltas(
                    cluster_state_pb2.ApplyDeltasRequest(
                        cluster=self.cluster, batch=types_pb2.DeltaBatch(deltas=[node("n0", {"cpu": "1"})])),
                    timeout=10)
        self.assertEqual(error_reason(cm.exception), "NOT_LEADER")
        leader = leader_of(cm.exception)
        self.assertIn(leader, REPLICAS)
        # ...and a client dialed there without endpoints follows it.
        c = self.client(FOLLOWER)
        self.assertGreater(c.apply([node("n1", {"cpu": "4"})]), 0)
        self.assertEqual(c.current_member, leader)
        self.assertEqual([n.name for n in c.nodes()], ["n1"])

    def test_raw_stub_follows(self):
        c = self.client(FOLLOWER)
        resp = c.state.ApplyDeltas(
            cluster_state_pb2.ApplyDeltasRequest(
                cluster=self.cluster, batch=types_pb2.DeltaBatch(deltas=[node("raw", {"cpu": "2"})])),
            timeout=10)
        self.assertGreater(resp.revision, 0)
        self.assertNotEqual(c.current_member, FOLLOWER)
        nodes = c.state.ListNodes(cluster_state_pb2.ListNodesRequest(cluster=self.cluster), timeout=10).nodes
        self.assertEqual([n.name for n in nodes], ["raw"])

    def test_stale_read_carries_the_floor(self):
        # A LeaderChannel as SluiceClient builds it, whose channels record what they send.
        rec = Recorder()
        lc = LeaderChannel(FOLLOWER, [], lambda a: grpc.intercept_channel(grpc.insecure_channel(a), rec))
        self.addCleanup(lc.close)
        stub = cluster_state_pb2_grpc.ClusterStateServiceStub(lc)
        rev = stub.ApplyDeltas(cluster_state_pb2.ApplyDeltasRequest(
            cluster=self.cluster, batch=types_pb2.DeltaBatch(deltas=[node("ryw", {"cpu": "1"})])), timeout=10).revision
        self.assertGreater(rev, 0)
        self.assertEqual(lc.revision_floor(self.cluster), rev)
        read = reads_pb2.ReadOptions(consistency=reads_pb2.READ_CONSISTENCY_STALE,
                                     max_staleness=duration_pb2.Duration(seconds=10))
        resp = stub.ListNodes(cluster_state_pb2.ListNodesRequest(cluster=self.cluster, read=read), timeout=10)
        self.assertEqual(rec.requests[-1].read.min_revision, rev)  # sent with the floor...
        self.assertEqual([n.name for n in resp.nodes], ["ryw"])  # ...and answered with the write
        self.assertGreaterEqual(resp.revision, rev)
        # The follower itself honours min_revision: it answers with the write.
        with grpc.insecure_channel(FOLLOWER) as ch:
            read.min_revision = rev
            resp = cluster_state_pb2_grpc.ClusterStateServiceStub(ch).ListNodes(
                cluster_state_pb2.ListNodesRequest(cluster=self.cluster, read=read), timeout=10)
        self.assertEqual([n.name for n in resp.nodes], ["ryw"])
        self.assertGreaterEqual(resp.revision, rev)

    def test_unreachable_member_rotates(self):
        c = self.client(dead_address(), endpoints=REPLICAS)
        self.assertEqual(len(c.members), len(REPLICAS) + 1)
        with self.assertRaises(grpc.RpcError) as cm:
            c.apply([node("n1", {"cpu": "1"})])
        self.assertEqual(cm.exception.code(), UNAVAILABLE)
        for attempt in range(len(c.members)):
            try:
                c.apply([node("n1", {"cpu": "1"})])
                break
            except grpc.RpcError as err:
                if attempt == len(c.members) - 1:
                    raise
                self.assertEqual(err.code(), UNAVAILABLE)
        self.assertIn(c.current_member, REPLICAS)
        self.assertEqual([n.name for n in c.nodes()], ["n1"])


if __name__ == "__main__":
    unittest.main()
