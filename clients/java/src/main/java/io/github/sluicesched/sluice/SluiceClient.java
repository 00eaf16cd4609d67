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
import sluice.v1.Scheduler.DiscardPlanRequest;
import sluice.v1.Scheduler.ExplainJobRequest;
import sluice.v1.Scheduler.ExplainJobResponse;
import sluice.v1.Scheduler.Plan;
import sluice.v1.Scheduler.ScheduleMode;
import sluice.v1.Scheduler.ScheduleRequest;
import sluice.v1.Scheduler.WatchPlansRequest;
import sluice.v1.Scheduler.WatchPlansResponse;
import sluice.v1.SchedulerServiceGrpc;
import sluice.v1.SchedulerServiceGrpc.SchedulerServiceBlockingStub;
import sluice.v1.Types.Delta;
import sluice.v1.Types.DeltaBatch;
import sluice.v1.Types.Node;

/**
 * A connection to a Sluice server, bound to one cluster by default. Calls block and throw
 * {@link io.grpc.StatusRuntimeException} when they fail (INVALID_ARGUMENT for a bad request,
 * naming the offending field).
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
 */
public final class SluiceClient implements AutoCloseable {
  private final ManagedChannel channel;
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
    ManagedChannelBuilder<?> cb = Grpc.newChannelBuilder(b.target, creds);
    if (b.token != null) {
      Metadata md = new Metadata();
      md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + b.token);
      ClientInterceptor auth = MetadataUtils.newAttachHeadersInterceptor(md);
      cb.intercept(auth);
    }
    this.channel = cb.build();
    this.cluster = b.cluster;
    this.timeoutMillis = b.timeoutMillis;
    this.state = ClusterStateServiceGrpc.newBlockingStub(channel);
    this.scheduler = SchedulerServiceGrpc.newBlockingStub(channel);
  }

  /** Starts a client for target ("host:port", or any gRPC target such as "dns:///host:port"). */
  public static Builder builder(String target) {
    return new Builder(target);
  }

  /** The raw ClusterStateService stub (no deadline). */
  public ClusterStateServiceBlockingStub state() {
    return state;
  }

  /** The raw SchedulerService stub (no deadline). */
  public SchedulerServiceBlockingStub scheduler() {
    return scheduler;
  }

  /** The channel, for async or future stubs. */
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

  /** Runs one cycle and returns its plan. */
  public Plan schedule(ScheduleMode mode) {
    return sch().schedule(ScheduleRequest.newBuilder().setCluster(cluster).setMode(mode).build()).getPlan();
  }

  /**
   * Commits a proposed plan: {@code getAppliedList()} are the decisions that took effect,
   * {@code getRejectedList()} those refused because the cluster changed since the plan.
   */
  public CommitPlanResponse commit(Plan plan) {
    return commit(plan.getId());
  }

  /** Commits a proposed plan by id. */
  public CommitPlanResponse commit(String planId) {
    return sch().commitPlan(CommitPlanRequest.newBuilder().setCluster(cluster).setPlanId(planId).build());
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
   * abandoned and the client closed. Blocks in {@code hasNext()}.
   */
  public Iterator<WatchPlansResponse> watchPlans(ScheduleMode mode) {
    return scheduler.watchPlans(WatchPlansRequest.newBuilder().setCluster(cluster).setMode(mode).build());
  }

  /** Maps each bound task ("namespace/name") to its node. */
  public static Map<String, String> binds(List<Decision> decisions) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Decision d : decisions) {
      if (d.hasBind()) {
        out.put(d.getBind().getTask(), d.getBind().getNode());
      }
    }
    return out;
  }

  /** Closes the channel, waiting up to five seconds for calls in progress. */
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
