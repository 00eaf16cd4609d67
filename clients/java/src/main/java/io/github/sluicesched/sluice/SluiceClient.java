package io.github.sluicesched.sluice;

import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import sluice.v1.ClusterState.ApplyDeltasRequest;
import sluice.v1.ClusterState.ListNodesRequest;
import sluice.v1.ClusterState.ListNodesResponse;
import sluice.v1.ClusterStateServiceGrpc;
import sluice.v1.ClusterStateServiceGrpc.ClusterStateServiceBlockingStub;
import sluice.v1.Scheduler.CommitPlanRequest;
import sluice.v1.Scheduler.CommitPlanResponse;
import sluice.v1.Scheduler.Decision;
import sluice.v1.Scheduler.DecisionOutcome;
import sluice.v1.Scheduler.DiscardPlanRequest;
import sluice.v1.Scheduler.ExplainJobRequest;
import sluice.v1.Scheduler.ExplainJobResponse;
import sluice.v1.Scheduler.GetPlanRequest;
import sluice.v1.Scheduler.GetPlanResponse;
import sluice.v1.Scheduler.Plan;
import sluice.v1.Scheduler.RejectedDecision;
import sluice.v1.Scheduler.ScheduleMode;
import sluice.v1.Scheduler.ScheduleRequest;
import sluice.v1.Scheduler.ScheduleResponse;
import sluice.v1.Scheduler.WatchPlansRequest;
import sluice.v1.Scheduler.WatchPlansResponse;
import sluice.v1.SchedulerServiceGrpc;
import sluice.v1.SchedulerServiceGrpc.SchedulerServiceBlockingStub;
import sluice.v1.Types.Delta;
import sluice.v1.Types.DeltaBatch;
import sluice.v1.Types.JobRef;
import sluice.v1.Types.Node;
import sluice.v1.Types.TaskRef;

/**
 * A connection to a Sluice server, bound to one cluster by default. Calls block and throw
 * {@link io.grpc.StatusRuntimeException} when they fail (INVALID_ARGUMENT for a bad request,
 * naming the offending field); {@link SluiceErrors#reason(Throwable)} is the failure's
 * reason, such as {@code ErrorReason.ERROR_REASON_PLAN_EXPIRED}.
 *
 * <p>Plans come whole: {@link #schedule}, {@link #getPlan}, {@link #commit} and {@link
 * #watchPlans} read every page of a plan's decisions and job outcomes (the server sends them
 * 1000 at a time).
 *
 * <pre>{@code
 * try (SluiceClient c = SluiceClient.builder("127.0.0.1:50051").cluster("demo").plaintext().build()) {
 *   c.apply(List.of(Deltas.node("n1", Map.of("cpu", "8"))), true);
 *   Plan plan = c.schedule(ScheduleMode.SCHEDULE_MODE_PROPOSE);
 *   c.commit(plan);
 * }
 * }</pre>
 *
 * <p>The generated stubs are {@link #state()} and {@link #scheduler()}; the messages are in
 * {@code sluice.v1.Types}, {@code sluice.v1.ClusterState} and {@code sluice.v1.Scheduler}.
 *
 * <h2>Replicated servers</h2>
 *
 * <p>A replicated sluiced (three members, one leader) takes writes on its leader only; a
 * follower refuses them with UNAVAILABLE, reason NOT_LEADER, naming the leader ({@link
 * SluiceErrors#leader}). The client follows the leader: calls go to the current member,
 * first the target, and
 *
 * <ul>
 *   <li>a unary call refused with NOT_LEADER naming a leader is sent again to the leader (a
 *       refused call did nothing), at most three hops per call, and later calls go there too
 *       (the leader need not be one of the {@link Builder#endpoints}); NOT_LEADER naming no
 *       leader is thrown as it is;
 *   <li>a call that fails with UNAVAILABLE because the member is unreachable, or because it
 *       answered STORE_UNAVAILABLE (it knows no leader) or STALE_READ_REFUSED, is thrown, not
 *       sent again (it may have taken effect), and later calls go to the next member of the
 *       target and the endpoints, round robin;
 *   <li>a stream ({@link #watchPlans}) that ends with NOT_LEADER moves later calls to the
 *       leader; the error reaches the caller, who opens a new stream.
 * </ul>
 *
 * <p>This holds for the raw stubs and {@link #channel()} as well: they all use the same
 * following channel, safe to share between threads (a call that fails on a member that
 * another call has already moved away from follows that move instead of moving again).
 *
 * <p>Stale reads read the client's own writes: per cluster, the client keeps the highest
 * revision a successful call saw (a write's acknowledgement, or a read's answer), and a
 * request whose {@code read} asks for READ_CONSISTENCY_STALE with min_revision 0 is sent with
 * min_revision set to it, so the member that answers has applied them. An explicit
 * min_revision is kept; linearizable reads are untouched.
 */
public final class SluiceClient implements AutoCloseable {
  private final LeaderChannel channel;
  private final String cluster;
  private final long timeoutMillis;
  private final ClusterStateServiceBlockingStub state;
  private final SchedulerServiceBlockingStub scheduler;

  private SluiceClient(Builder b) throws IOException {
    ChannelCredentials creds;
    if (b.plaintext) {
      creds = InsecureChannelCredentials.create();
    } else {
      TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
      if (b.caFile != null) {
        tls.trustManager(b.caFile);
      }
      if (b.certFile != null) {
        tls.keyManager(b.certFile, b.keyFile);
      }
      creds = tls.build();
    }
    ClientInterceptor auth = null;
    if (b.token != null) {
      Metadata md = new Metadata();
      md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + b.token);
      auth = MetadataUtils.newAttachHeadersInterceptor(md);
    }
    // Every member's channel has the same credentials and token.
    ClientInterceptor token = auth;
    this.channel = new LeaderChannel(b.target, b.endpoints, t -> {
      ManagedChannelBuilder<?> cb = Grpc.newChannelBuilder(t, creds);
      if (token != null) {
        cb.intercept(token);
      }
      return cb.build();
    });
    this.cluster = b.cluster;
    this.timeoutMillis = b.timeoutMillis;
    this.state = ClusterStateServiceGrpc.newBlockingStub(channel);
    this.scheduler = SchedulerServiceGrpc.newBlockingStub(channel);
  }

  /** Starts a client for target ("host:port", or any gRPC target such as "dns:///host:port"). */
  public static Builder builder(String target) {
    return new Builder(target);
  }

  /**
   * The raw ClusterStateService stub (no deadline). It follows the leader as the wrapper's
   * methods do (see "Replicated servers" above).
   */
  public ClusterStateServiceBlockingStub state() {
    return state;
  }

  /**
   * The raw SchedulerService stub (no deadline). It follows the leader as the wrapper's
   * methods do (see "Replicated servers" above).
   */
  public SchedulerServiceBlockingStub scheduler() {
    return scheduler;
  }

  /**
   * The channel, for async or future stubs: calls on it follow the leader as the wrapper's
   * do (see "Replicated servers" above). It is not one connection but the client's channels
   * to every member it has talked to; {@link #close} (or its own shutdown) closes them all.
   */
  public ManagedChannel channel() {
    return channel;
  }

  /** The cluster this client acts on. */
  public String cluster() {
    return cluster;
  }

  private ClusterStateServiceBlockingStub st() {
    return state.withDeadlineAfter(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  private SchedulerServiceBlockingStub sch() {
    return scheduler.withDeadlineAfter(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /**
   * Applies one batch of deltas atomically and returns the cluster's revision after it. With
   * replaceAll the cluster becomes exactly these objects.
   */
  public long apply(List<Delta> deltas, boolean replaceAll) {
    DeltaBatch batch = DeltaBatch.newBuilder().addAllDeltas(deltas).setReplaceAll(replaceAll).build();
    return st().applyDeltas(ApplyDeltasRequest.newBuilder().setCluster(cluster).setBatch(batch).build())
        .getRevision();
  }

  /** Every node of the cluster, by name. */
  public List<Node> nodes() {
    List<Node> out = new ArrayList<>();
    String token = "";
    do {
      ListNodesResponse resp = st().listNodes(ListNodesRequest.newBuilder()
          .setCluster(cluster).setPageSize(1000).setPageToken(token).build());
      out.addAll(resp.getNodesList());
      token = resp.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  /**
   * Runs one cycle and returns its whole plan. The response holds the plan's first page of
   * decisions and job outcomes; schedule reads the others through GetPlan, so the plan's
   * decisions and jobs are complete ({@code getCounts()} sums them up). An auto-committed
   * plan's decisions carry their outcomes (see {@link #outcomes(Plan)}).
   */
  public Plan schedule(ScheduleMode mode) {
    ScheduleResponse resp = sch().schedule(ScheduleRequest.newBuilder().setCluster(cluster).setMode(mode).build());
    return restOfPlan(resp.getPlan(), resp.getNextPageToken());
  }

  /**
   * A plan with all its decisions and job outcomes, read page by page: a proposed or
   * committed plan the server still keeps (a committed plan's decisions carry their outcome
   * and rejected reason), a discarded or expired one as its summary ({@code
   * getDecisionsDropped()}), or a recent dry run's. Fails with reason PLAN_NOT_FOUND for any
   * other.
   */
  public Plan getPlan(String planId) {
    GetPlanResponse resp = sch().getPlan(GetPlanRequest.newBuilder().setCluster(cluster).setPlanId(planId).build());
    return restOfPlan(resp.getPlan(), resp.getNextPageToken());
  }

  /** Reads a plan again, whole (see {@link #getPlan(String)}). */
  public Plan getPlan(Plan plan) {
    return getPlan(plan.getId());
  }

  /**
   * Completes a plan's first page (of a Schedule, CommitPlan, WatchPlans or GetPlan response
   * from the raw stubs) with the pages that nextPageToken and the tokens after it name, read
   * through GetPlan. Returns first itself when the token is empty.
   */
  public Plan restOfPlan(Plan first, String nextPageToken) {
    if (nextPageToken.isEmpty()) {
      return first;
    }
    Plan.Builder whole = first.toBuilder();
    int pageSize = Math.max(first.getDecisionsCount(), first.getJobsCount());
    String planCluster = first.getCluster().isEmpty() ? cluster : first.getCluster();
    String token = nextPageToken;
    while (!token.isEmpty()) {
      GetPlanResponse resp = sch().getPlan(GetPlanRequest.newBuilder().setCluster(planCluster)
          .setPlanId(first.getId()).setPageSize(pageSize).setPageToken(token).build());
      whole.addAllDecisions(resp.getPlan().getDecisionsList()).addAllJobs(resp.getPlan().getJobsList());
      token = resp.getNextPageToken();
    }
    return whole.build();
  }

  /**
   * Commits a proposed plan. {@code getAppliedList()} are, for the whole plan, the decisions
   * that took effect, {@code getRejectedList()} those refused because the cluster changed
   * since the plan's base revision (each with its reason); {@code getPlan()} is the committed
   * plan whole, each bind and eviction with its outcome.
   *
   * <p>The server answers with the committed plan's first page and lists only that page's
   * decisions: for a plan of more than one page, commit reads the rest through GetPlan and
   * takes the lists from the committed record (see {@link #outcomes(Plan)}). Committing a
   * committed plan again answers the same, so a commit whose answer was lost may be retried.
   * A plan that is not proposed fails with {@link SluiceErrors#reason} PLAN_DISCARDED,
   * PLAN_EXPIRED, PLAN_DRY_RUN or PLAN_NOT_FOUND.
   */
  public CommitPlanResponse commit(Plan plan) {
    return commit(plan.getId());
  }

  /** Commits a proposed plan by id (see {@link #commit(Plan)}). */
  public CommitPlanResponse commit(String planId) {
    return whole(sch().commitPlan(CommitPlanRequest.newBuilder().setCluster(cluster).setPlanId(planId).build()));
  }

  /** A commit's answer for the whole plan: the record read whole, the lists from it. */
  private CommitPlanResponse whole(CommitPlanResponse resp) {
    if (resp.getNextPageToken().isEmpty() || !resp.hasPlan()) {
      return resp;
    }
    Plan whole = restOfPlan(resp.getPlan(), resp.getNextPageToken());
    Outcomes o = outcomes(whole);
    return resp.toBuilder().setPlan(whole).clearNextPageToken()
        .clearApplied().addAllApplied(o.applied()).clearRejected().addAllRejected(o.rejected()).build();
  }

  /**
   * A committed plan's binds and evictions split by their outcome.
   *
   * @param applied the decisions that took effect
   * @param rejected the decisions the commit refused, each with its reason
   */
  public record Outcomes(List<Decision> applied, List<RejectedDecision> rejected) {
    public Outcomes {
      applied = List.copyOf(applied);
      rejected = List.copyOf(rejected);
    }
  }

  /**
   * Splits a committed plan's binds and evictions by their outcome. Pipelines are in
   * neither list; a decision without an outcome (from a server that predates outcomes)
   * counts as applied.
   */
  public static Outcomes outcomes(Plan plan) {
    List<Decision> applied = new ArrayList<>();
    List<RejectedDecision> rejected = new ArrayList<>();
    for (Decision d : plan.getDecisionsList()) {
      if (d.hasPipeline()) {
        continue;
      }
      if (d.getOutcome() == DecisionOutcome.DECISION_OUTCOME_REJECTED) {
        rejected.add(RejectedDecision.newBuilder().setDecision(d).setReason(d.getRejectedReason()).build());
      } else {
        applied.add(d);
      }
    }
    return new Outcomes(applied, rejected);
  }

  /** Drops a proposed plan. */
  public void discard(Plan plan) {
    sch().discardPlan(DiscardPlanRequest.newBuilder().setCluster(cluster).setPlanId(plan.getId()).build());
  }

  /** A job's outcome (in namespace "default") in the most recent cycle that considered it. */
  public ExplainJobResponse explain(String job) {
    return explain("", job);
  }

  /** A job's outcome in the most recent cycle that considered it. */
  public ExplainJobResponse explain(String namespace, String job) {
    return sch().explainJob(ExplainJobRequest.newBuilder()
        .setCluster(cluster).setNamespace(namespace).setName(job).build());
  }

  /**
   * The plans of the cycles the server runs as the cluster changes, until the iterator is
   * abandoned and the client closed. Blocks in {@code hasNext()}. Each response's plan is
   * whole (its pages after the first read through GetPlan, in {@code next()}), and in
   * auto-commit mode its commit lists cover the whole plan, as {@link #commit} does.
   */
  public Iterator<WatchPlansResponse> watchPlans(ScheduleMode mode) {
    Iterator<WatchPlansResponse> raw =
        scheduler.watchPlans(WatchPlansRequest.newBuilder().setCluster(cluster).setMode(mode).build());
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return raw.hasNext();
      }

      @Override
      public WatchPlansResponse next() {
        return whole(raw.next());
      }
    };
  }

  /** A WatchPlans message with its plan whole (and its auto-commit's lists for it). */
  private WatchPlansResponse whole(WatchPlansResponse m) {
    if (m.getNextPageToken().isEmpty()) {
      return m;
    }
    Plan whole = restOfPlan(m.getPlan(), m.getNextPageToken());
    WatchPlansResponse.Builder b = m.toBuilder().setPlan(whole).clearNextPageToken();
    if (m.hasCommit()) {
      Outcomes o = outcomes(whole);
      CommitPlanResponse.Builder c = m.getCommit().toBuilder().clearNextPageToken()
          .clearApplied().addAllApplied(o.applied()).clearRejected().addAllRejected(o.rejected());
      if (c.hasPlan()) {
        c.setPlan(whole);
      }
      b.setCommit(c);
    }
    return b.build();
  }

  /**
   * A task reference (a decision's task, an eviction's for_task) as "namespace/name", an empty
   * namespace being "default"; "" for an unset one (an eviction that makes room for no task).
   * A namespace never holds "/", so the full name of a valid reference is unambiguous, even
   * for a name that holds one.
   */
  public static String fullName(TaskRef ref) {
    return fullName(ref.getNamespace(), ref.getName());
  }

  /** A job reference (a decision's job, a job outcome's) as "namespace/name"; see above. */
  public static String fullName(JobRef ref) {
    return fullName(ref.getNamespace(), ref.getName());
  }

  private static String fullName(String namespace, String name) {
    if (name.isEmpty()) {
      return "";
    }
    return (namespace.isEmpty() ? "default" : namespace) + "/" + name;
  }

  /** Maps each bound task, by its full name ("namespace/name", see fullName), to its node. */
  public static Map<String, String> binds(List<Decision> decisions) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Decision d : decisions) {
      if (d.hasBind()) {
        out.put(fullName(d.getBind().getTask()), d.getBind().getNode());
      }
    }
    return out;
  }

  /**
   * Closes the channels to every member this client opened, waiting up to five seconds for
   * calls in progress.
   */
  @Override
  public void close() throws InterruptedException {
    channel.shutdown();
    if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
      channel.shutdownNow();
    }
  }

  /** Configures a SluiceClient. TLS with the system's roots unless told otherwise. */
  public static final class Builder {
    private final String target;
    private String cluster = "default";
    private boolean plaintext;
    private File caFile;
    private File certFile;
    private File keyFile;
    private String token;
    private long timeoutMillis = 30_000;
    private List<String> endpoints = List.of();

    private Builder(String target) {
      this.target = target;
    }

    /** The cluster to act on. Default "default". */
    public Builder cluster(String cluster) {
      this.cluster = cluster;
      return this;
    }

    /** Connects without TLS; only on a trusted network. */
    public Builder plaintext() {
      this.plaintext = true;
      return this;
    }

    /** Trusts the CA certificates (PEM) of caFile for the server's certificate. */
    public Builder trustedCertificates(File caFile) {
      this.caFile = caFile;
      return this;
    }

    /** Presents a client certificate (PEM certificate chain and PKCS#8 key) for mTLS. */
    public Builder clientCertificate(File certFile, File keyFile) {
      this.certFile = certFile;
      this.keyFile = keyFile;
      return this;
    }

    /** Sends "authorization: Bearer TOKEN" with every call. */
    public Builder bearerToken(String token) {
      this.token = token;
      return this;
    }

    /**
     * The other members of a replicated server ("host:port" each), besides the target:
     * where calls go when the member they went to is unreachable or cannot serve them (see
     * "Replicated servers" in {@link SluiceClient}). The members are the target, then these,
     * without repeats, in this order. Each gets a channel with the same TLS settings and
     * token as the target's when calls first go to it. Default none: a client follows a
     * leader the target names even without endpoints.
     */
    public Builder endpoints(String... others) {
      this.endpoints = List.of(others);
      return this;
    }

    /** Deadline of each call made through the wrapper's methods. Default 30 seconds. */
    public Builder timeoutMillis(long timeoutMillis) {
      this.timeoutMillis = timeoutMillis;
      return this;
    }

    /** Opens the channel (lazily: the first call connects). */
    public SluiceClient build() throws IOException {
      if (plaintext && (caFile != null || certFile != null)) {
        throw new IllegalStateException("plaintext() excludes TLS certificates");
      }
      return new SluiceClient(this);
    }
  }
}
