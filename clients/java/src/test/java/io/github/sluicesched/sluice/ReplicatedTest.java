package io.github.sluicesched.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import sluice.v1.ClusterState.ApplyDeltasRequest;
import sluice.v1.ClusterState.ListNodesRequest;
import sluice.v1.ClusterState.ListNodesResponse;
import sluice.v1.ClusterStateServiceGrpc;
import sluice.v1.Reads.ReadConsistency;
import sluice.v1.Reads.ReadOptions;
import sluice.v1.Types.DeltaBatch;
import sluice.v1.Types.Node;

/**
 * Leader following against a real three-member replicated sluiced: SLUICE_REPLICAS names its
 * members' gRPC addresses (comma-separated), SLUICE_REPLICA_FOLLOWER one that followed when
 * they started (plaintext, no credentials). Without them the tests are skipped, unless
 * SLUICE_REQUIRE_SERVERS=1 (scripts/clients.sh sets it), when they fail.
 */
class ReplicatedTest {
  private static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      if ("1".equals(System.getenv("SLUICE_REQUIRE_SERVERS"))) {
        fail("SLUICE_REQUIRE_SERVERS=1 but " + name + " is not set");
      }
      assumeTrue(false, "no replicated sluiced: set SLUICE_REPLICAS and SLUICE_REPLICA_FOLLOWER "
          + "(scripts/clients.sh java starts one)");
    }
    return v;
  }

  private static List<String> replicas() {
    return List.of(env("SLUICE_REPLICAS").split(","));
  }

  /** A cluster name of this run's own. */
  private static String cluster(String test) {
    return "java-replicated-" + test + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
  }

  private static Set<String> names(List<Node> nodes) {
    return nodes.stream().map(Node::getName).collect(Collectors.toSet());
  }

  @Test
  void aWriteToAFollowerGoesToTheLeader() throws Exception {
    replicas();
    String follower = env("SLUICE_REPLICA_FOLLOWER");
    String cluster = cluster("follow");
    try (SluiceClient c = SluiceClient.builder(follower).cluster(cluster).plaintext().timeoutMillis(30_000).build()) {
      assertTrue(c.apply(List.of(Deltas.node("n1", Map.of("cpu", "4"))), false) > 0);
      assertNotEquals(follower, ((LeaderChannel) c.channel()).currentTarget(), "the client moved to the leader");
      assertEquals(Set.of("n1"), names(c.nodes()));
    }
    // The raw stub of a fresh client sends the refused call again too.
    try (SluiceClient c = SluiceClient.builder(follower).cluster(cluster).plaintext().build()) {
      ApplyDeltasRequest req = ApplyDeltasRequest.newBuilder().setCluster(cluster)
          .setBatch(DeltaBatch.newBuilder().addDeltas(Deltas.node("n2", Map.of("cpu", "2")))).build();
      assertTrue(c.state().applyDeltas(req).getRevision() > 0);
      assertNotEquals(follower, ((LeaderChannel) c.channel()).currentTarget());
      assertEquals(Set.of("n1", "n2"),
          names(c.state().listNodes(ListNodesRequest.newBuilder().setCluster(cluster).build()).getNodesList()));
    }
  }

  @Test
  void anUnreachableTargetMovesToTheNextMember() throws Exception {
    List<String> replicas = replicas();
    String dead;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = "127.0.0.1:" + s.getLocalPort();
    }
    try (SluiceClient c = SluiceClient.builder(dead).endpoints(replicas.toArray(String[]::new))
        .cluster(cluster("rotate")).plaintext().timeoutMillis(30_000).build()) {
      List<String> members = ((LeaderChannel) c.channel()).members();
      assertEquals(1 + replicas.size(), members.size());
      StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
          () -> c.apply(List.of(Deltas.node("n1", Map.of("cpu", "1"))), false));
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());

      StatusRuntimeException last = e;
      for (int i = 0; i < members.size(); i++) {
        try {
          assertTrue(c.apply(List.of(Deltas.node("n1", Map.of("cpu", "1"))), false) > 0);
          assertEquals(Set.of("n1"), names(c.nodes()));
          return;
        } catch (StatusRuntimeException again) {
          last = again;
        }
      }
      fail("no apply succeeded within " + members.size() + " calls after the first", last);
    }
  }

  /**
   * Read-your-writes on a follower: the client writes through the leader, then its floor turns
   * a stale ListNodes into one with min_revision = the write's revision, which a plain channel
   * sends to the follower; the follower answers only once it applied the write.
   */
  @Test
  void aStaleReadWithTheFloorSeesTheWriteOnAFollower() throws Exception {
    replicas();
    String follower = env("SLUICE_REPLICA_FOLLOWER");
    String cluster = cluster("ryw");
    try (SluiceClient c = SluiceClient.builder(follower).cluster(cluster).plaintext().timeoutMillis(30_000).build()) {
      long revision = c.apply(List.of(Deltas.node("n1", Map.of("cpu", "4"))), false);
      assertTrue(revision > 0);

      ListNodesRequest stale = ListNodesRequest.newBuilder().setCluster(cluster)
          .setRead(ReadOptions.newBuilder().setConsistency(ReadConsistency.READ_CONSISTENCY_STALE)).build();
      ListNodesRequest withFloor = ((LeaderChannel) c.channel()).floor().apply(stale);
      assertEquals(revision, withFloor.getRead().getMinRevision(), "the client's floor is its write's revision");

      ManagedChannel plain = Grpc.newChannelBuilder(follower, InsecureChannelCredentials.create()).build();
      try {
        ListNodesResponse resp = ClusterStateServiceGrpc.newBlockingStub(plain)
            .withDeadlineAfter(30, TimeUnit.SECONDS).listNodes(withFloor);
        assertEquals(Set.of("n1"), names(resp.getNodesList()));
        assertTrue(resp.getRevision() >= revision, "the follower answered at or after the write");
      } finally {
        plain.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}
