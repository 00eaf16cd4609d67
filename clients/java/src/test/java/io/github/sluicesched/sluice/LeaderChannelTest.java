package io.github.sluicesched.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import sluice.v1.ClusterState.ApplyDeltasRequest;
import sluice.v1.ClusterState.ApplyDeltasResponse;
import sluice.v1.ClusterState.ListNodesRequest;
import sluice.v1.ClusterState.ListNodesResponse;
import sluice.v1.ClusterStateServiceGrpc;
import sluice.v1.Errors.ErrorReason;
import sluice.v1.Reads.ReadConsistency;
import sluice.v1.Reads.ReadOptions;
import sluice.v1.Scheduler.ScheduleMode;
import sluice.v1.Scheduler.WatchPlansRequest;
import sluice.v1.Scheduler.WatchPlansResponse;
import sluice.v1.SchedulerServiceGrpc;

/**
 * The leader following of {@link LeaderChannel}, against fake members on loopback: each
 * answers ApplyDeltas and WatchPlans with the error it is told, or ApplyDeltas with its
 * revision, and ListNodes with readRevision, recording the ListNodes and WatchPlans requests
 * it got. No sluiced needed.
 */
class LeaderChannelTest {
  private final List<Member> members = new ArrayList<>();
  private final List<SluiceClient> clients = new ArrayList<>();

  /** A fake member of a replicated server. */
  private static final class Member {
    final AtomicInteger applies = new AtomicInteger();
    final long revision;
    volatile long readRevision;
    final List<ListNodesRequest> lists = new CopyOnWriteArrayList<>();
    final List<WatchPlansRequest> watches = new CopyOnWriteArrayList<>();
    volatile StatusRuntimeException error;
    volatile String authorization;
    final Server server;
    final String address;

    Member(long revision) throws IOException {
      this.revision = revision;
      ClusterStateServiceGrpc.ClusterStateServiceImplBase state = new ClusterStateServiceGrpc.ClusterStateServiceImplBase() {
        @Override
        public void applyDeltas(ApplyDeltasRequest req, StreamObserver<ApplyDeltasResponse> out) {
          applies.incrementAndGet();
          if (error != null) {
            out.onError(error);
            return;
          }
          out.onNext(ApplyDeltasResponse.newBuilder().setRevision(Member.this.revision).build());
          out.onCompleted();
        }

        @Override
        public void listNodes(ListNodesRequest req, StreamObserver<ListNodesResponse> out) {
          lists.add(req);
          out.onNext(ListNodesResponse.newBuilder().setRevision(readRevision).build());
          out.onCompleted();
        }
      };
      SchedulerServiceGrpc.SchedulerServiceImplBase scheduler = new SchedulerServiceGrpc.SchedulerServiceImplBase() {
        @Override
        public void watchPlans(WatchPlansRequest req, StreamObserver<WatchPlansResponse> out) {
          watches.add(req);
          out.onError(error != null ? error : Status.UNIMPLEMENTED.asRuntimeException());
        }
      };
      Metadata.Key<String> auth = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
      ServerInterceptor seeToken = new ServerInterceptor() {
        @Override
        public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call, Metadata headers,
            io.grpc.ServerCallHandler<Q, R> next) {
          authorization = headers.get(auth);
          return next.startCall(call, headers);
        }
      };
      server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
          .addService(ServerInterceptors.intercept(state, seeToken)).addService(scheduler).build().start();
      address = "127.0.0.1:" + server.getPort();
    }
  }

  private Member member(long revision) throws IOException {
    Member m = new Member(revision);
    members.add(m);
    return m;
  }

  private SluiceClient client(String target, String... endpoints) throws IOException {
    SluiceClient c = SluiceClient.builder(target).plaintext().endpoints(endpoints).timeoutMillis(10_000).build();
    clients.add(c);
    return c;
  }

  private static String current(SluiceClient c) {
    return ((LeaderChannel) c.channel()).currentTarget();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (SluiceClient c : clients) {
      c.close();
    }
    for (Member m : members) {
      m.server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** UNAVAILABLE with a sluice.sched ErrorInfo of reason and metadata. */
  private static StatusRuntimeException unavailable(String reason, Map<String, String> metadata) {
    ErrorInfo info = ErrorInfo.newBuilder().setDomain(SluiceErrors.DOMAIN).setReason(reason)
        .putAllMetadata(metadata).build();
    return StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
        .setCode(Status.Code.UNAVAILABLE.value()).setMessage(reason.toLowerCase()).addDetails(Any.pack(info)).build());
  }

  private static StatusRuntimeException notLeader(Member leader) {
    return unavailable("NOT_LEADER", Map.of(SluiceErrors.METADATA_LEADER, leader.address));
  }

  private static String deadAddress() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return "127.0.0.1:" + s.getLocalPort();
    }
  }

  @Test
  void notLeaderIsSentAgainToTheLeaderWithTheSameHeaders() throws Exception {
    Member leader = member(7);
    Member follower = member(0);
    follower.error = notLeader(leader);
    SluiceClient c = SluiceClient.builder(follower.address).plaintext().bearerToken("t0k").build();
    clients.add(c);

    assertEquals(7, c.apply(List.of(Deltas.node("n1", Map.of("cpu", "1"))), false));
    assertEquals(1, follower.applies.get());
    assertEquals(1, leader.applies.get());
    assertEquals("Bearer t0k", leader.authorization, "the leader's channel sends the token too");
    assertEquals(leader.address, current(c));

    // Later calls, the raw stub's too, go straight to the leader.
    assertEquals(7, c.state().applyDeltas(ApplyDeltasRequest.getDefaultInstance()).getRevision());
    assertEquals(1, follower.applies.get());
    assertEquals(2, leader.applies.get());
  }

  @Test
  void rawStubsSendAgainToo() throws Exception {
    Member leader = member(9);
    Member follower = member(0);
    follower.error = notLeader(leader);
    SluiceClient c = client(follower.address);
    assertEquals(9, c.state().applyDeltas(ApplyDeltasRequest.getDefaultInstance()).getRevision());
    assertEquals(9, ClusterStateServiceGrpc.newFutureStub(c.channel())
        .applyDeltas(ApplyDeltasRequest.getDefaultInstance()).get(10, TimeUnit.SECONDS).getRevision());
    assertEquals(1, follower.applies.get());
    assertEquals(2, leader.applies.get());
  }

  @Test
  void notLeaderWithoutALeaderIsThrownAsItIs() throws Exception {
    Member follower = member(0);
    Member other = member(5);
    follower.error = unavailable("NOT_LEADER", Map.of());
    SluiceClient c = client(follower.address, other.address);

    StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
        () -> c.apply(List.of(), false));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertEquals(ErrorReason.ERROR_REASON_NOT_LEADER, SluiceErrors.reason(e));
    assertTrue(SluiceErrors.leader(e).isEmpty());
    assertEquals(1, follower.applies.get());
    assertEquals(0, other.applies.get(), "no retry, no rotation");
    assertEquals(follower.address, current(c));
  }

  @Test
  void oneCallFollowsAtMostThreeHops() throws Exception {
    Member a = member(0);
    Member b = member(0);
    a.error = notLeader(b);
    b.error = notLeader(a);
    SluiceClient c = client(a.address);

    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.apply(List.of(), false));
    assertEquals(ErrorReason.ERROR_REASON_NOT_LEADER, SluiceErrors.reason(e));
    assertEquals(1 + LeaderChannel.MAX_LEADER_HOPS, a.applies.get() + b.applies.get());
    assertEquals(2, a.applies.get());
    assertEquals(2, b.applies.get());
  }

  @ParameterizedTest
  @ValueSource(strings = {"STORE_UNAVAILABLE", "STALE_READ_REFUSED"})
  void aMemberThatCannotServeMovesLaterCallsToTheNext(String reason) throws Exception {
    Member first = member(0);
    Member second = member(3);
    first.error = unavailable(reason, Map.of());
    SluiceClient c = client(first.address, second.address, first.address);
    assertEquals(List.of(first.address, second.address), ((LeaderChannel) c.channel()).members());

    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.apply(List.of(), false));
    assertEquals(reason, SluiceErrors.errorInfo(e).orElseThrow().getReason());
    assertEquals(0, second.applies.get(), "not sent again");
    assertEquals(3, c.apply(List.of(), false));
    assertEquals(1, first.applies.get());
  }

  @Test
  void otherErrorsMoveNothing() throws Exception {
    Member first = member(0);
    Member second = member(3);
    SluiceClient c = client(first.address, second.address);
    first.error = unavailable("SHUTTING_DOWN", Map.of());
    assertThrows(StatusRuntimeException.class, () -> c.apply(List.of(), false));
    first.error = Status.FAILED_PRECONDITION.asRuntimeException();
    assertThrows(StatusRuntimeException.class, () -> c.apply(List.of(), false));
    assertEquals(first.address, current(c));
    assertEquals(0, second.applies.get());
  }

  @Test
  void anUnreachableMemberMovesLaterCallsRoundRobin() throws Exception {
    String dead = deadAddress();
    Member live = member(4);
    SluiceClient c = client(dead, live.address);
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.apply(List.of(), false));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertEquals(live.address, current(c));
    assertEquals(4, c.apply(List.of(), false));

    // The last member wraps around to the first.
    live.error = unavailable("STORE_UNAVAILABLE", Map.of());
    assertThrows(StatusRuntimeException.class, () -> c.apply(List.of(), false));
    assertEquals(dead, current(c));
  }

  @Test
  void aSingleMemberStays() throws Exception {
    SluiceClient c = client(deadAddress());
    String target = current(c);
    assertThrows(StatusRuntimeException.class, () -> c.apply(List.of(), false));
    assertEquals(target, current(c));
  }

  @Test
  void aStreamEndedByNotLeaderMovesLaterCalls() throws Exception {
    Member leader = member(6);
    Member follower = member(0);
    follower.error = notLeader(leader);
    SluiceClient c = client(follower.address);
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
        () -> c.watchPlans(ScheduleMode.SCHEDULE_MODE_PROPOSE).hasNext());
    assertEquals(leader.address, SluiceErrors.leader(e).orElseThrow());
    assertEquals(leader.address, current(c));
    assertEquals(6, c.apply(List.of(), false));
    assertEquals(0, follower.applies.get());
  }

  /** A failure on a member that another call has moved away from follows that move. */
  @Test
  void aStaleFailureDoesNotMoveAgain() {
    List<ManagedChannel> opened = new ArrayList<>();
    LeaderChannel ch = new LeaderChannel("a:1", List.of("b:1", "c:1"), t -> {
      ManagedChannel m = Grpc.newChannelBuilder(t, InsecureChannelCredentials.create()).build();
      opened.add(m);
      return m;
    });
    try {
      ManagedChannel a = ch.current();
      assertFalse(ch.observe(a, Status.UNAVAILABLE, new Metadata()));
      assertEquals("b:1", ch.currentTarget());
      ManagedChannel b = ch.current();
      ch.observe(a, Status.UNAVAILABLE, new Metadata());
      assertEquals("b:1", ch.currentTarget(), "a second failure on a: already moved");
      assertSame(b, ch.current());

      // A NOT_LEADER seen on a follows where the calls are now, and may be sent again there.
      Metadata trailers = StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
          .setCode(Status.Code.UNAVAILABLE.value()).addDetails(Any.pack(ErrorInfo.newBuilder()
              .setDomain(SluiceErrors.DOMAIN).setReason("NOT_LEADER").putMetadata("leader", "c:1").build()))
          .build()).getTrailers();
      assertTrue(ch.observe(a, Status.UNAVAILABLE, trailers));
      assertEquals("b:1", ch.currentTarget());
      assertTrue(ch.observe(b, Status.UNAVAILABLE, trailers));
      assertEquals("c:1", ch.currentTarget());
      assertEquals(3, opened.size());
    } finally {
      ch.shutdownNow();
    }
    assertTrue(opened.stream().allMatch(ManagedChannel::isShutdown), "shutdown closes every channel opened");
  }

  private static final ReadOptions STALE = ReadOptions.newBuilder()
      .setConsistency(ReadConsistency.READ_CONSISTENCY_STALE).build();

  private static ListNodesRequest list(String cluster, ReadOptions read) {
    return ListNodesRequest.newBuilder().setCluster(cluster).setRead(read).build();
  }

  /** The read options of the last ListNodes the member got. */
  private static ReadOptions lastRead(Member m) {
    return m.lists.get(m.lists.size() - 1).getRead();
  }

  @Test
  void staleReadsCarryTheClientsFloor() throws Exception {
    Member m = member(7);
    SluiceClient c = SluiceClient.builder(m.address).cluster("c").plaintext().timeoutMillis(10_000).build();
    clients.add(c);

    // No write yet: no floor.
    c.state().listNodes(list("c", STALE));
    assertEquals(0, lastRead(m).getMinRevision());

    assertEquals(7, c.apply(List.of(Deltas.node("n1", Map.of("cpu", "1"))), false));
    ListNodesRequest mine = list("c", STALE);
    c.state().listNodes(mine);
    assertEquals(7, lastRead(m).getMinRevision(), "a stale read carries the write's revision");
    assertEquals(ReadConsistency.READ_CONSISTENCY_STALE, lastRead(m).getConsistency());
    assertEquals(0, mine.getRead().getMinRevision(), "the caller's request is not changed");

    // An explicit min_revision stays.
    c.state().listNodes(list("c", STALE.toBuilder().setMinRevision(3).build()));
    assertEquals(3, lastRead(m).getMinRevision());

    // Linearizable reads, explicit or unspecified, and reads without options are untouched.
    c.state().listNodes(list("c", ReadOptions.newBuilder()
        .setConsistency(ReadConsistency.READ_CONSISTENCY_LINEARIZABLE).build()));
    assertEquals(ReadOptions.newBuilder().setConsistency(ReadConsistency.READ_CONSISTENCY_LINEARIZABLE).build(),
        lastRead(m));
    c.state().listNodes(list("c", ReadOptions.getDefaultInstance()));
    assertEquals(0, lastRead(m).getMinRevision());
    c.state().listNodes(ListNodesRequest.newBuilder().setCluster("c").build());
    assertFalse(m.lists.get(m.lists.size() - 1).hasRead());

    // Another cluster has no floor.
    c.state().listNodes(list("other", STALE));
    assertEquals(0, lastRead(m).getMinRevision());

    // A read's answer with a higher revision raises the floor; a lower one does not lower it.
    m.readRevision = 12;
    c.state().listNodes(list("c", ReadOptions.getDefaultInstance()));
    c.state().listNodes(list("c", STALE));
    assertEquals(12, lastRead(m).getMinRevision());
    m.readRevision = 5;
    c.state().listNodes(list("c", ReadOptions.getDefaultInstance()));
    c.state().listNodes(list("c", STALE));
    assertEquals(12, lastRead(m).getMinRevision());

    // A server stream's stale request carries it too.
    assertThrows(StatusRuntimeException.class, () -> SchedulerServiceGrpc.newBlockingStub(c.channel())
        .watchPlans(WatchPlansRequest.newBuilder().setCluster("c").setRead(STALE).build()).hasNext());
    assertEquals(12, m.watches.get(m.watches.size() - 1).getRead().getMinRevision());
  }

  @Test
  void aFailedCallRaisesNoFloor() throws Exception {
    Member m = member(7);
    m.error = Status.FAILED_PRECONDITION.asRuntimeException();
    SluiceClient c = client(m.address);
    assertThrows(StatusRuntimeException.class, () -> c.state().applyDeltas(
        ApplyDeltasRequest.newBuilder().setCluster("c").build()));
    c.state().listNodes(list("c", STALE));
    assertEquals(0, lastRead(m).getMinRevision());
  }

  /** A floor noted on one member goes with the client to the leader it follows. */
  @Test
  void theFloorFollowsTheLeader() throws Exception {
    Member leader = member(8);
    Member follower = member(0);
    follower.error = notLeader(leader);
    SluiceClient c = SluiceClient.builder(follower.address).cluster("c").plaintext().build();
    clients.add(c);
    assertEquals(8, c.apply(List.of(), false));
    c.state().listNodes(list("c", STALE));
    assertEquals(8, lastRead(leader).getMinRevision());
  }
}
