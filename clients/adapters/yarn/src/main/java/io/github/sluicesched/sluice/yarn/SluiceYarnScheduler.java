package io.github.sluicesched.sluice.yarn;

import com.google.protobuf.Timestamp;
import io.github.sluicesched.sluice.Deltas;
import io.github.sluicesched.sluice.SluiceClient;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import sluice.v1.Scheduler.BindDecision;
import sluice.v1.Scheduler.CommitPlanResponse;
import sluice.v1.Scheduler.Decision;
import sluice.v1.Scheduler.Plan;
import sluice.v1.Scheduler.ScheduleMode;
import sluice.v1.Scheduler.UpdateSchedulerConfigRequest;
import sluice.v1.Types.Delta;
import sluice.v1.Types.Job;
import sluice.v1.Types.Node;
import sluice.v1.Types.ObjectKind;
import sluice.v1.Types.Queue;
import sluice.v1.Types.Task;
import sluice.v1.Types.TaskStatus;

/**
 * The scheduler half of a YARN ResourceManager, backed by Sluice: what a real RM's
 * {@code ResourceScheduler} would delegate to. The RM feeds it its events (queue
 * configuration, NodeManager registration and heartbeats, application submission, AM allocate
 * calls, application removal) and calls {@link #schedule()} from its scheduling loop; the
 * adapter keeps Sluice's copy of the cluster in step with ApplyDeltas batches, runs a Sluice
 * cycle, commits the plan and turns binds into containers and evictions into preemptions.
 *
 * <p>Mapping (see README.md for the full table):
 *
 * <ul>
 *   <li>NodeManager: a Sluice node named after its host, capacity as allocatable, host and rack
 *       as labels, unschedulable unless RUNNING (DECOMMISSIONING, UNHEALTHY); a node that is
 *       DECOMMISSIONED, LOST or SHUT DOWN is removed with its containers.
 *   <li>Queue "root.a.b": a Sluice queue of that name under "root.a"; capacity as weight and
 *       (as an absolute share of the cluster) deserved; maximum capacity as capability.
 *   <li>Application: a job in its leaf queue with the application priority; minAvailable 1, or
 *       every live container (AM included) for a gang application.
 *   <li>ResourceRequest rows of one scheduler key: as many pending tasks of one role as the ANY
 *       row's numContainers, with the request priority (sign flipped) and the locality of the
 *       host and rack rows.
 *   <li>Plan: a bind is a Container on the bind node; an eviction puts the container in its
 *       application's strict preemption contract and has its NodeManager kill it after the
 *       grace period; a pipeline decision does nothing yet.
 * </ul>
 *
 * <p>Thread-safe: every public method holds the instance's lock. Every event changes the
 * adapter's state before its batch is sent. A batch the server refuses (or cannot take: it is
 * down) leaves Sluice behind the adapter; the next call sends the whole state and the scheduler
 * configuration. So does a batch or plan whose revision went back, the sign of a server that
 * restarted without its state.
 */
public final class SluiceYarnScheduler {
  /**
   * The Sluice scheduler configuration {@link #start()} installs unless told otherwise: enqueue,
   * allocate, preempt (application priority within a queue) and reclaim (capacity across
   * queues). priority, gang, conformance and hierarchical capacity share the first tier, so a
   * reclaim victim must satisfy both gang (its gang stays whole) and capacity (its queue is
   * above its deserved share): Volcano lets the first tier that names victims decide, and with
   * capacity in a later tier gang alone would. gang's JobStarving is off so that every pending
   * container of a higher-priority application may preempt, not only the first minAvailable;
   * gang still protects victims and keeps gangs whole. predicates and nodeorder (locality
   * preferences, spreading) come second.
   */
  public static final String DEFAULT_SCHEDULER_CONFIG = """
      actions: "enqueue, allocate, preempt, reclaim"
      tiers:
      - plugins:
        - name: priority
        - name: gang
          enableJobStarving: false
        - name: conformance
        - name: capacity
          enableHierarchy: true
      - plugins:
        - name: predicates
        - name: nodeorder
      """;

  /** Role of AM tasks. */
  public static final String AM_ROLE = "am";

  private static final Pattern APP_ID = Pattern.compile("application_(\\d+)_(\\d+)");

  /** Settings of the adapter. */
  public static final class Options {
    String namespace = "yarn";
    String rackLabel = YarnMapping.DEFAULT_RACK_LABEL;
    String gpuResource = YarnMapping.DEFAULT_GPU_RESOURCE;
    String schedulerConfig = DEFAULT_SCHEDULER_CONFIG;
    long preemptionGraceMillis;
    int nonGangMinAvailable = 1;
    LongSupplier clock = System::currentTimeMillis;

    /** Namespace of the jobs and tasks. Default "yarn". */
    public Options namespace(String ns) {
      this.namespace = ns;
      return this;
    }

    /** Node label holding the rack. Default {@value YarnMapping#DEFAULT_RACK_LABEL}. */
    public Options rackLabel(String label) {
      this.rackLabel = label;
      return this;
    }

    /** Sluice resource name of yarn.io/gpu. Default {@value YarnMapping#DEFAULT_GPU_RESOURCE}. */
    public Options gpuResource(String name) {
      this.gpuResource = name;
      return this;
    }

    /**
     * Scheduler configuration (Volcano scheduler-conf YAML) that {@link #start()} sets on the
     * cluster; null leaves the cluster's configuration alone. Default
     * {@link #DEFAULT_SCHEDULER_CONFIG}.
     */
    public Options schedulerConfig(String yaml) {
      this.schedulerConfig = yaml;
      return this;
    }

    /**
     * How long a preempted container may run before its NodeManager is told to kill it (YARN's
     * max_wait_before_kill), so that its AM can checkpoint or release it. Default 0.
     */
    public Options preemptionGraceMillis(long millis) {
      this.preemptionGraceMillis = millis;
      return this;
    }

    /**
     * minAvailable of an application that is not a gang. Default 1: the application runs once
     * one task (its AM, if managed) runs, and the gang plugin never takes its last ready task
     * in a preemption or reclaim. 0 makes every container independent (Sluice's "no gang"):
     * with unmanaged AMs that lets the last container be preempted too.
     */
    public Options nonGangMinAvailable(int n) {
      if (n < 0 || n > 1) {
        throw new IllegalArgumentException("nonGangMinAvailable must be 0 or 1");
      }
      this.nonGangMinAvailable = n;
      return this;
    }

    /** The clock (epoch milliseconds). Default the system clock. */
    public Options clock(LongSupplier clock) {
      this.clock = clock;
      return this;
    }
  }

  /** A NodeManager. */
  private static final class NodeInfo {
    NodeId id;
    String rack;
    Resource capability;
    NodeState state = NodeState.RUNNING;
    double cpuUtil = -1;
    double memUtil = -1;
    Node proto;
    final Set<TaskInfo> tasks = new LinkedHashSet<>();
  }

  /** An application. */
  private static final class App {
    final ApplicationSubmission sub;
    final String queue;
    Job proto;
    int nextTask = 1;
    int nextContainer = 1;
    boolean finishing;
    /** The ask table: rows by resource name, per scheduler key. */
    final Map<SchedulerKey, Map<String, ResourceRequest>> asks = new LinkedHashMap<>();
    final Map<SchedulerKey, YarnMapping.Locality> locality = new HashMap<>();
    /** Tasks not yet completed, in creation order. */
    final Set<TaskInfo> live = new LinkedHashSet<>();
    final List<Container> newlyAllocated = new ArrayList<>();
    final List<ContainerStatus> completed = new ArrayList<>();
    final Set<String> preempted = new LinkedHashSet<>();

    App(ApplicationSubmission sub, String queue) {
      this.sub = sub;
      this.queue = queue;
    }

    String id() {
      return sub.applicationId();
    }
  }

  /** A Sluice task: a container asked for, allocated or running. */
  private static final class TaskInfo {
    final App app;
    final String name;
    final String fullName;
    final SchedulerKey key; // null for the AM
    Task proto;
    Container container;
    NodeInfo node;
    long preemptedAt = -1;
    boolean released;
    boolean killed;
    boolean cleanupSent;

    TaskInfo(App app, String name, String fullName, SchedulerKey key) {
      this.app = app;
      this.name = name;
      this.fullName = fullName;
      this.key = key;
    }

    boolean am() {
      return key == null;
    }

    boolean pending() {
      return container == null;
    }
  }

  /** One ApplyDeltas batch, one change per object (the last one wins). */
  private final class Batch {
    private final Map<String, Delta> deltas = new LinkedHashMap<>();

    void node(Node n) {
      deltas.put("node/" + n.getName(), Deltas.upsert(n));
    }

    void queue(Queue q) {
      deltas.put("queue/" + q.getName(), Deltas.upsert(q));
    }

    void job(Job j) {
      deltas.put("job/" + j.getNamespace() + "/" + j.getName(), Deltas.upsert(j));
    }

    void task(Task t) {
      deltas.put("task/" + t.getNamespace() + "/" + t.getName(), Deltas.upsert(t));
    }

    void delete(ObjectKind kind, String namespace, String name) {
      String k = switch (kind) {
        case OBJECT_KIND_NODE -> "node/" + name;
        case OBJECT_KIND_QUEUE -> "queue/" + name;
        case OBJECT_KIND_JOB -> "job/" + namespace + "/" + name;
        case OBJECT_KIND_TASK -> "task/" + namespace + "/" + name;
        default -> throw new IllegalArgumentException("unexpected kind " + kind);
      };
      deltas.put(k, Deltas.delete(kind, namespace, name));
    }

    /**
     * Sends the batch, or the whole state when Sluice is behind (a batch failed before, or
     * the server came back without the cluster): the adapter's own state already holds the
     * batch's changes, so a replace_all carries them too.
     */
    void apply() {
      if (needsResync) {
        recover();
        return;
      }
      if (deltas.isEmpty()) {
        return;
      }
      long rev;
      try {
        rev = client.apply(new ArrayList<>(deltas.values()), false);
        batches++;
      } catch (StatusRuntimeException e) {
        needsResync = true;
        throw e;
      }
      if (!sawRevision(rev)) {
        // The revision went back: Sluice restarted without its state and this batch
        // started an empty cluster. Send everything.
        recover();
      }
    }
  }

  private final SluiceClient client;
  private final Options opts;
  private final YarnMapping mapping;

  private final Map<String, QueueConfig> queueConfigs = new TreeMap<>();
  private final Map<String, Queue> queueProtos = new TreeMap<>();
  private final Map<String, NodeInfo> nodes = new TreeMap<>();
  private final Map<String, App> apps = new LinkedHashMap<>();
  private final Map<String, TaskInfo> tasks = new HashMap<>();
  private final Map<String, TaskInfo> containers = new HashMap<>();
  private Resource clusterResource = Resource.NONE;
  private boolean needsResync;
  private long batches;
  private long lastRevision;
  private long recoveries;

  public SluiceYarnScheduler(SluiceClient client, Options opts) {
    this.client = Objects.requireNonNull(client);
    this.opts = Objects.requireNonNull(opts);
    this.mapping = new YarnMapping(opts.rackLabel, opts.gpuResource);
  }

  public SluiceYarnScheduler(SluiceClient client) {
    this(client, new Options());
  }

  /** The mapping in use. */
  public YarnMapping mapping() {
    return mapping;
  }

  /**
   * Sends the whole state in a replace_all batch, so that Sluice's copy of the cluster is
   * exactly the adapter's (empty on a fresh start), then installs the scheduler configuration
   * (unless the options say null): what a RM does when it starts or fails over.
   */
  public synchronized void start() {
    // The batch first: it creates the cluster, which a configuration alone does not.
    resync();
    if (opts.schedulerConfig != null) {
      client.scheduler().updateSchedulerConfig(UpdateSchedulerConfigRequest.newBuilder()
          .setCluster(client.cluster()).setConfig(opts.schedulerConfig).build());
    }
  }

  /** Sends the whole state (nodes, queues, jobs, tasks) in one replace_all batch. */
  public synchronized void resync() {
    List<Delta> all = new ArrayList<>();
    for (NodeInfo n : nodes.values()) {
      all.add(Deltas.upsert(n.proto));
    }
    for (Queue q : queueProtos.values()) {
      all.add(Deltas.upsert(q));
    }
    for (App a : apps.values()) {
      all.add(Deltas.upsert(a.proto));
      for (TaskInfo t : a.live) {
        all.add(Deltas.upsert(t.proto));
      }
    }
    try {
      lastRevision = client.apply(all, true);
    } catch (StatusRuntimeException e) {
      needsResync = true;
      throw e;
    }
    batches++;
    needsResync = false;
  }

  /**
   * Whether rev continues the revisions seen so far. A revision lower than the last one
   * means the server lost the cluster (a restart without persisted state).
   */
  private boolean sawRevision(long rev) {
    if (rev < lastRevision) {
      needsResync = true;
      return false;
    }
    lastRevision = rev;
    return true;
  }

  /**
   * Brings Sluice back to the adapter's state after a failure or a server that lost the
   * cluster: the whole state in a replace_all batch, then the scheduler configuration again
   * (a server that restarted without its state has lost that too).
   */
  private void recover() {
    resync();
    recoveries++;
    if (opts.schedulerConfig != null) {
      try {
        client.scheduler().updateSchedulerConfig(UpdateSchedulerConfigRequest.newBuilder()
            .setCluster(client.cluster()).setConfig(opts.schedulerConfig).build());
      } catch (StatusRuntimeException e) {
        needsResync = true;
        throw e;
      }
    }
  }

  /**
   * Marks Sluice as behind the adapter: the next call sends the whole state and the
   * scheduler configuration first. For a caller that learnt another way that the server
   * restarted or failed over.
   */
  public synchronized void markOutOfSync() {
    needsResync = true;
  }

  /** Whether the next call will send the whole state first. */
  public synchronized boolean outOfSync() {
    return needsResync;
  }

  /** How many times the adapter has sent its whole state after a failure or a server restart. */
  public synchronized long recoveries() {
    return recoveries;
  }

  private void resyncIfNeeded() {
    if (needsResync) {
      recover();
    }
  }

  // ---- queues ----------------------------------------------------------------------------

  /**
   * Sets the queue hierarchy (CapacityScheduler's reinitialize): every queue but "root" is
   * upserted, queues no longer configured are deleted. Fails, changing nothing, when a
   * parent is missing or an application's queue would be gone or no longer a leaf.
   */
  public synchronized void setQueues(Collection<QueueConfig> configs) {
    Map<String, QueueConfig> next = new TreeMap<>();
    for (QueueConfig q : configs) {
      next.put(q.path(), q);
    }
    List<Queue> protos = mapping.queues(next.values(), clusterResource);
    Set<String> parents = parentsOf(next.keySet());
    for (App a : apps.values()) {
      if (!next.containsKey(a.queue) || parents.contains(a.queue)) {
        throw new IllegalStateException("queue " + a.queue + " of application " + a.id()
            + " would no longer be a leaf queue");
      }
    }
    Batch batch = new Batch();
    List<String> removed = new ArrayList<>(queueProtos.keySet());
    removed.removeIf(p -> next.containsKey(p));
    removed.sort((x, y) -> Integer.compare(y.length(), x.length())); // children first
    for (String p : removed) {
      batch.delete(ObjectKind.OBJECT_KIND_QUEUE, "", p);
    }
    Map<String, Queue> nextProtos = new TreeMap<>();
    for (Queue q : protos) {
      nextProtos.put(q.getName(), q);
      if (!q.equals(queueProtos.get(q.getName()))) {
        batch.queue(q);
      }
    }
    // The adapter's state first: if the batch fails, the next call sends the whole state.
    queueConfigs.clear();
    queueConfigs.putAll(next);
    queueProtos.clear();
    queueProtos.putAll(nextProtos);
    batch.apply();
  }

  private static Set<String> parentsOf(Collection<String> paths) {
    Set<String> out = new LinkedHashSet<>();
    for (String p : paths) {
      int i = p.lastIndexOf('.');
      if (i > 0) {
        out.add(p.substring(0, i));
      }
    }
    return out;
  }

  /** Resolves a queue given by full path or by unique leaf name to its path. */
  private String resolveQueue(String q) {
    if (queueConfigs.containsKey(q)) {
      return q;
    }
    String found = null;
    for (String p : queueConfigs.keySet()) {
      if (p.endsWith("." + q)) {
        if (found != null) {
          throw new IllegalArgumentException("queue name " + q + " is ambiguous: " + found + ", " + p);
        }
        found = p;
      }
    }
    if (found == null) {
      throw new IllegalArgumentException("unknown queue " + q);
    }
    return found;
  }

  /** Recomputes the queues' absolute amounts when the cluster's resources change. */
  private void recomputeQueues(Batch batch) {
    Resource total = Resource.NONE;
    for (NodeInfo n : nodes.values()) {
      total = total.plus(n.capability);
    }
    if (total.equals(clusterResource)) {
      return;
    }
    clusterResource = total;
    for (Queue q : mapping.queues(queueConfigs.values(), total)) {
      if (!q.equals(queueProtos.get(q.getName()))) {
        queueProtos.put(q.getName(), q);
        batch.queue(q);
      }
    }
  }

  // ---- nodes -----------------------------------------------------------------------------

  /**
   * A NodeManager registers (ResourceTrackerService.registerNodeManager) with its total
   * capability and rack ("/rack1"; null for none). Registering again updates the capability
   * and rack and makes the node RUNNING.
   */
  public synchronized void registerNode(NodeId id, String rack, Resource capability) {
    NodeInfo n = nodes.get(id.host());
    if (n != null && !n.id.equals(id)) {
      throw new IllegalStateException("host " + id.host() + " already has NodeManager " + n.id);
    }
    if (n == null) {
      n = new NodeInfo();
      n.id = id;
      nodes.put(id.host(), n);
    }
    n.rack = rack;
    n.capability = capability;
    n.state = NodeState.RUNNING;
    Batch batch = new Batch();
    refreshNode(n, batch);
    recomputeQueues(batch);
    batch.apply();
  }

  private void refreshNode(NodeInfo n, Batch batch) {
    Node p = mapping.node(n.id, n.rack, n.capability, n.state, n.cpuUtil, n.memUtil);
    if (!p.equals(n.proto)) {
      n.proto = p;
      batch.node(p);
    }
  }

  /**
   * Sets a node's state outside a heartbeat (an administrator's graceful decommission,
   * {@code yarn rmadmin -refreshNodes}): RUNNING takes containers, DECOMMISSIONING and
   * UNHEALTHY keep theirs but take no new ones, DECOMMISSIONED, LOST and SHUTDOWN remove the
   * node.
   */
  public synchronized void setNodeState(NodeId id, NodeState state) {
    NodeInfo n = node(id);
    if (state.gone()) {
      removeNode(id);
      return;
    }
    n.state = state;
    Batch batch = new Batch();
    refreshNode(n, batch);
    batch.apply();
  }

  /**
   * A NodeManager heartbeat: state and utilisation changes update the node, RUNNING containers
   * make their tasks RUNNING, COMPLETE ones end their tasks (and are reported to their
   * applications). Returns the containers the node must kill: released by their AM, of a
   * finished application, preempted (once the grace period is over), or unknown.
   */
  public synchronized NodeHeartbeatResponse nodeHeartbeat(NodeHeartbeat hb) {
    NodeInfo n = node(hb.nodeId());
    if (hb.state().gone()) {
      removeNode(hb.nodeId());
      return new NodeHeartbeatResponse(List.of());
    }
    Batch batch = new Batch();
    n.state = hb.state();
    n.cpuUtil = hb.cpuUtilization();
    n.memUtil = hb.memoryUtilization();
    refreshNode(n, batch);
    List<String> cleanup = new ArrayList<>();
    Set<App> touched = new LinkedHashSet<>();
    long now = opts.clock.getAsLong();
    for (ContainerStatus s : hb.containers()) {
      TaskInfo t = containers.get(s.containerId());
      if (t == null || t.node != n) {
        if (s.state() != ContainerState.COMPLETE) {
          cleanup.add(s.containerId());
        }
        continue;
      }
      switch (s.state()) {
        case NEW -> { }
        case RUNNING -> {
          if (t.proto.getStatus() == TaskStatus.TASK_STATUS_BOUND) {
            t.proto = t.proto.toBuilder().setStatus(TaskStatus.TASK_STATUS_RUNNING).setStartedAt(ts(now)).build();
            batch.task(t.proto);
          }
        }
        case COMPLETE -> {
          complete(t, exitStatus(t, s.exitStatus()), diagnostics(t, s.diagnostics()), batch);
          touched.add(t.app);
        }
      }
    }
    for (TaskInfo t : n.tasks) {
      if (!t.cleanupSent && (t.released || t.killed
          || (t.preemptedAt >= 0 && now - t.preemptedAt >= opts.preemptionGraceMillis))) {
        t.cleanupSent = true;
        cleanup.add(t.container.id());
      }
    }
    for (App a : touched) {
      settle(a, batch);
    }
    batch.apply();
    return new NodeHeartbeatResponse(cleanup);
  }

  /** Removes a node: its containers are lost (ABORTED to their applications). */
  public synchronized void removeNode(NodeId id) {
    NodeInfo n = nodes.get(id.host());
    if (n == null) {
      return;
    }
    Batch batch = new Batch();
    Set<App> touched = new LinkedHashSet<>();
    for (TaskInfo t : new ArrayList<>(n.tasks)) {
      complete(t, ContainerStatus.ABORTED, "Container released on a lost node " + id, batch);
      touched.add(t.app);
    }
    nodes.remove(id.host());
    batch.delete(ObjectKind.OBJECT_KIND_NODE, "", id.host());
    recomputeQueues(batch);
    for (App a : touched) {
      settle(a, batch);
    }
    batch.apply();
  }

  private NodeInfo node(NodeId id) {
    NodeInfo n = nodes.get(id.host());
    if (n == null || !n.id.equals(id)) {
      throw new IllegalStateException("unknown NodeManager " + id + ": it must register first");
    }
    return n;
  }

  // ---- applications ----------------------------------------------------------------------

  /**
   * Accepts an application into its leaf queue (which must be RUNNING). With a managed AM the
   * AM container is asked for at once (a task of role "am" with YARN priority 0 that is never
   * preempted).
   */
  public synchronized void submitApplication(ApplicationSubmission s) {
    if (apps.containsKey(s.applicationId())) {
      throw new IllegalStateException("application " + s.applicationId() + " already exists");
    }
    String path = resolveQueue(s.queue());
    if (parentsOf(queueConfigs.keySet()).contains(path)) {
      throw new IllegalArgumentException("application " + s.applicationId() + " submitted to " + path
          + ", which is not a leaf queue");
    }
    if (queueConfigs.get(path).state() != QueueState.RUNNING) {
      throw new IllegalStateException("queue " + path + " is " + queueConfigs.get(path).state()
          + " and accepts no application");
    }
    App a = new App(s, path);
    Batch batch = new Batch();
    TaskInfo am = null;
    if (s.managedAm()) {
      am = newTask(a, null, YarnMapping.Locality.ANYWHERE);
      batch.task(am.proto);
    }
    a.proto = jobProto(a);
    batch.job(a.proto);
    // The adapter's state first: if the batch fails, the next call sends the whole state.
    apps.put(s.applicationId(), a);
    if (am != null) {
      tasks.put(am.fullName, am);
    }
    batch.apply();
  }

  /**
   * An AM's allocate call (ApplicationMasterProtocol.allocate): updates the application's ask
   * table with the rows given (YARN semantics: a row replaces the row of the same scheduler key
   * and resource name; the ANY row's numContainers is the number outstanding), releases the
   * containers given, and returns the containers allocated and completed since the previous
   * call and the containers being preempted.
   */
  public synchronized Allocation allocate(String applicationId, List<ResourceRequest> asks, List<String> releases) {
    App a = app(applicationId);
    if (a.finishing) {
      throw new IllegalStateException("application " + applicationId + " has finished");
    }
    // Check every key's new table before changing anything.
    Map<SchedulerKey, Map<String, ResourceRequest>> next = new LinkedHashMap<>();
    for (ResourceRequest r : asks) {
      if (r.capability().memoryMb() == 0 && r.capability().vcores() == 0 && r.capability().gpus() == 0) {
        throw new IllegalArgumentException("ask of " + applicationId + " for an empty capability");
      }
      Map<String, ResourceRequest> rows = next.computeIfAbsent(r.key(),
          k -> new LinkedHashMap<>(a.asks.getOrDefault(k, Map.of())));
      if (!r.isAny() && r.numContainers() == 0) {
        rows.remove(r.resourceName());
      } else {
        rows.put(r.resourceName(), r);
      }
    }
    for (Map<String, ResourceRequest> rows : next.values()) {
      ResourceRequest any = rows.get(ResourceRequest.ANY);
      if (any != null && any.numContainers() > 0) {
        mapping.locality(rows.values()); // throws for strict locality with nowhere to go
      }
    }
    Batch batch = new Batch();
    for (String id : releases) {
      TaskInfo t = containers.get(id);
      if (t == null || t.app != a || t.am() || t.released) {
        continue;
      }
      t.released = true;
      releasing(t, batch);
    }
    for (Map.Entry<SchedulerKey, Map<String, ResourceRequest>> e : next.entrySet()) {
      a.asks.put(e.getKey(), e.getValue());
      reconcile(a, e.getKey(), batch);
    }
    settle(a, batch);
    batch.apply();
    Allocation out = new Allocation(a.newlyAllocated, a.completed, new PreemptionMessage(a.preempted));
    a.newlyAllocated.clear();
    a.completed.clear();
    return out;
  }

  /**
   * The application finished or was killed (APP_REMOVED): its outstanding asks go, its
   * containers are killed; its job leaves Sluice once every container has completed.
   */
  public synchronized void finishApplication(String applicationId) {
    App a = app(applicationId);
    a.finishing = true;
    Batch batch = new Batch();
    for (TaskInfo t : new ArrayList<>(a.live)) {
      if (t.pending()) {
        removeTask(t, batch);
      } else if (!t.killed) {
        t.killed = true;
        releasing(t, batch);
      }
    }
    a.asks.clear();
    settle(a, batch);
    batch.apply();
  }

  private App app(String id) {
    App a = apps.get(id);
    if (a == null) {
      throw new IllegalArgumentException("unknown application " + id);
    }
    return a;
  }

  // ---- scheduling ------------------------------------------------------------------------

  /**
   * Runs one Sluice cycle (Schedule in propose mode, then CommitPlan) and applies the
   * decisions the commit took: binds become containers (queued for their AM's next allocate
   * call, AM containers for the RM to launch), evictions become preemptions. The client reads
   * plans whole and takes the commit's applied and rejected decisions from the committed
   * record, so a cycle of more decisions than one page of a plan holds is applied in full.
   */
  public synchronized CycleResult schedule() {
    resyncIfNeeded();
    Plan plan;
    CommitPlanResponse resp;
    try {
      plan = client.schedule(ScheduleMode.SCHEDULE_MODE_PROPOSE);
      if (plan.getBaseRevision() < lastRevision) {
        // The server lost the cluster since the last batch: nothing of this plan is about
        // the adapter's state. Send everything; the next cycle schedules.
        needsResync = true;
        client.discard(plan);
        recover();
        return new CycleResult(plan, List.of(), List.of(), 0, 0);
      }
      resp = client.commit(plan);
    } catch (StatusRuntimeException e) {
      // Unknown cluster, unavailable server: whatever Sluice has may be behind.
      needsResync = true;
      throw e;
    }
    lastRevision = Math.max(lastRevision, resp.getRevision());
    long now = opts.clock.getAsLong();
    List<Container> allocated = new ArrayList<>();
    List<Container> preempted = new ArrayList<>();
    Map<App, Set<SchedulerKey>> touched = new LinkedHashMap<>();
    for (Decision d : resp.getAppliedList()) {
      if (d.hasBind()) {
        BindDecision b = d.getBind();
        TaskInfo t = tasks.get(SluiceClient.fullName(b.getTask()));
        NodeInfo n = nodes.get(b.getNode());
        if (t == null || !t.pending() || n == null) {
          continue; // cannot happen while the adapter is Sluice's only writer
        }
        SchedulerKey key = t.key;
        Resource res = t.am() ? t.app.sub.amResource() : key.capability();
        Container c = new Container(containerId(t.app), t.app.id(), n.id, res, t.am() ? 0 : key.priority(),
            t.am() ? 0 : key.allocationRequestId(), t.fullName, t.am());
        t.container = c;
        t.node = n;
        t.proto = t.proto.toBuilder().setStatus(TaskStatus.TASK_STATUS_BOUND).setNode(n.id.host())
            .clearDeviceIds().addAllDeviceIds(b.getDeviceIdsList()).build();
        containers.put(c.id(), t);
        n.tasks.add(t);
        allocated.add(c);
        if (!t.am()) {
          t.app.newlyAllocated.add(c);
          consumeAsk(t.app, key, n);
          touched.computeIfAbsent(t.app, x -> new LinkedHashSet<>()).add(key);
        }
      } else if (d.hasEvict()) {
        TaskInfo t = tasks.get(SluiceClient.fullName(d.getEvict().getTask()));
        if (t == null || t.pending()) {
          continue;
        }
        t.preemptedAt = now;
        t.proto = t.proto.toBuilder().setStatus(TaskStatus.TASK_STATUS_RELEASING).build();
        t.app.preempted.add(t.container.id());
        preempted.add(t.container);
      }
    }
    int pipelined = 0;
    for (Decision d : plan.getDecisionsList()) {
      if (d.hasPipeline()) {
        pipelined++;
      }
    }
    Batch batch = new Batch();
    for (Map.Entry<App, Set<SchedulerKey>> e : touched.entrySet()) {
      for (SchedulerKey k : e.getValue()) {
        reconcile(e.getKey(), k, batch);
      }
    }
    batch.apply();
    return new CycleResult(plan, allocated, preempted, pipelined, resp.getRejectedCount());
  }

  /**
   * An allocation on node n uses up one container of the key's ANY row and of the node's and
   * rack's rows (YARN's AppSchedulingInfo.allocate); rows at zero are dropped.
   */
  private static void consumeAsk(App a, SchedulerKey key, NodeInfo n) {
    Map<String, ResourceRequest> rows = a.asks.get(key);
    if (rows == null) {
      return;
    }
    for (String name : new String[] {ResourceRequest.ANY, n.id.host(), n.rack}) {
      ResourceRequest r = name == null ? null : rows.get(name);
      if (r == null) {
        continue;
      }
      int left = Math.max(0, r.numContainers() - 1);
      if (left == 0 && !r.isAny()) {
        rows.remove(name);
      } else {
        rows.put(name, new ResourceRequest(r.allocationRequestId(), r.priority(), r.resourceName(), r.capability(),
            left, r.relaxLocality()));
      }
    }
  }

  // ---- tasks -----------------------------------------------------------------------------

  /**
   * Makes the key's pending tasks match its ask table: as many as the ANY row asks for (new
   * ones created, the newest surplus ones deleted), all with the key's current locality. When
   * the rows left no longer allow any node (strict locality whose hosts were used up), the
   * previous locality stays.
   */
  private void reconcile(App a, SchedulerKey key, Batch batch) {
    Map<String, ResourceRequest> rows = a.asks.getOrDefault(key, Map.of());
    ResourceRequest any = rows.get(ResourceRequest.ANY);
    int desired = any == null ? 0 : any.numContainers();
    List<TaskInfo> pending = new ArrayList<>();
    for (TaskInfo t : a.live) {
      if (key.equals(t.key) && t.pending()) {
        pending.add(t);
      }
    }
    while (pending.size() > desired) {
      removeTask(pending.remove(pending.size() - 1), batch);
    }
    if (desired == 0) {
      return;
    }
    YarnMapping.Locality loc;
    try {
      loc = mapping.locality(rows.values());
      a.locality.put(key, loc);
    } catch (IllegalArgumentException e) {
      loc = a.locality.getOrDefault(key, YarnMapping.Locality.ANYWHERE);
    }
    for (TaskInfo t : pending) {
      Task p = withLocality(t.proto, loc);
      if (!p.equals(t.proto)) {
        t.proto = p;
        batch.task(p);
      }
    }
    while (pending.size() < desired) {
      TaskInfo t = newTask(a, key, loc);
      tasks.put(t.fullName, t);
      pending.add(t);
      batch.task(t.proto);
    }
  }

  /** A new pending task of the key (the AM's when key is null), added to the app's live set. */
  private TaskInfo newTask(App a, SchedulerKey key, YarnMapping.Locality loc) {
    String name = key == null ? a.id() + "-am" : String.format("%s-%06d", a.id(), a.nextTask++);
    String ns = opts.namespace;
    TaskInfo t = new TaskInfo(a, name, ns + "/" + name, key);
    Task.Builder b = Task.newBuilder()
        .setName(name)
        .setNamespace(ns)
        .setJob(a.id())
        .putAllLabels(YarnMapping.taskLabels(a.id()));
    if (key == null) {
      b.setRole(AM_ROLE)
          .putAllResources(mapping.resources(a.sub.amResource()))
          .setPriority(YarnMapping.taskPriority(0))
          .setPreemptable(false)
          .putAnnotations("yarn.io/priority", "0");
    } else {
      b.setRole(key.role())
          .putAllResources(mapping.resources(key.capability()))
          .setPriority(YarnMapping.taskPriority(key.priority()))
          .putAnnotations("yarn.io/priority", Integer.toString(key.priority()))
          .putAnnotations("yarn.io/allocation-request-id", Long.toString(key.allocationRequestId()));
    }
    t.proto = withLocality(b.build(), loc);
    a.live.add(t);
    return t;
  }

  private static Task withLocality(Task t, YarnMapping.Locality loc) {
    Task.Builder b = t.toBuilder().clearNodeSelector().putAllNodeSelector(loc.nodeSelector());
    if (loc.affinity() == null) {
      b.clearAffinity();
    } else {
      b.setAffinity(loc.affinity());
    }
    return b.build();
  }

  /** Marks an allocated task RELEASING (its container is being killed). */
  private static void releasing(TaskInfo t, Batch batch) {
    if (t.proto.getStatus() != TaskStatus.TASK_STATUS_RELEASING) {
      t.proto = t.proto.toBuilder().setStatus(TaskStatus.TASK_STATUS_RELEASING).build();
      batch.task(t.proto);
    }
  }

  /** Ends an allocated task: deleted, its completion queued for its AM. */
  private void complete(TaskInfo t, int exitStatus, String diagnostics, Batch batch) {
    String id = t.container.id();
    removeTask(t, batch);
    t.app.preempted.remove(id);
    if (!t.am()) {
      t.app.completed.add(ContainerStatus.complete(id, exitStatus, diagnostics));
    }
  }

  private void removeTask(TaskInfo t, Batch batch) {
    t.app.live.remove(t);
    tasks.remove(t.fullName);
    if (t.container != null) {
      containers.remove(t.container.id());
    }
    if (t.node != null) {
      t.node.tasks.remove(t);
    }
    batch.delete(ObjectKind.OBJECT_KIND_TASK, opts.namespace, t.name);
  }

  /** Updates the app's job (minAvailable follows a gang's live tasks) or deletes a finished one. */
  private void settle(App a, Batch batch) {
    if (a.finishing && a.live.isEmpty()) {
      apps.remove(a.id());
      batch.delete(ObjectKind.OBJECT_KIND_JOB, opts.namespace, a.id());
      return;
    }
    Job j = jobProto(a);
    if (!j.equals(a.proto)) {
      a.proto = j;
      batch.job(j);
    }
  }

  private Job jobProto(App a) {
    int min = a.sub.gang() ? Math.max(1, a.live.size()) : opts.nonGangMinAvailable;
    return Job.newBuilder()
        .setName(a.id())
        .setNamespace(opts.namespace)
        .setQueue(a.queue)
        .setPriority(a.sub.priority())
        .setMinAvailable(min)
        .setCreatedAt(ts(a.sub.submitTime()))
        .putLabels("yarn.io/application-id", a.id())
        .putAnnotations("yarn.io/application-name", a.sub.name())
        .putAnnotations("yarn.io/user", a.sub.user())
        .putAnnotations("yarn.io/gang", Boolean.toString(a.sub.gang()))
        .build();
  }

  private static int exitStatus(TaskInfo t, int reported) {
    if (t.preemptedAt >= 0) {
      return ContainerStatus.PREEMPTED;
    }
    if (t.released) {
      return ContainerStatus.ABORTED;
    }
    if (t.killed) {
      return ContainerStatus.KILLED_BY_RESOURCEMANAGER;
    }
    return reported;
  }

  private static String diagnostics(TaskInfo t, String reported) {
    if (t.preemptedAt >= 0) {
      return "Container preempted by scheduler";
    }
    if (t.released) {
      return "Container released by application";
    }
    if (t.killed) {
      return "Container killed: application finished";
    }
    return reported;
  }

  /** YARN's container id: container_TS_APP_01_NNNNNN, numbered per application from 1. */
  private static String containerId(App a) {
    int n = a.nextContainer++;
    Matcher m = APP_ID.matcher(a.id());
    if (m.matches()) {
      return String.format("container_%s_%s_01_%06d", m.group(1), m.group(2), n);
    }
    return String.format("container_%s_%06d", a.id(), n);
  }

  private static Timestamp ts(long millis) {
    return Timestamp.newBuilder().setSeconds(Math.floorDiv(millis, 1000))
        .setNanos((int) Math.floorMod(millis, 1000) * 1_000_000).build();
  }

  // ---- views -----------------------------------------------------------------------------

  /** The cluster's total resources (every registered node). */
  public synchronized Resource clusterResource() {
    return clusterResource;
  }

  /** The Sluice queue the adapter keeps for a path. */
  public synchronized Queue queue(String path) {
    return queueProtos.get(path);
  }

  /** The application's allocated containers that have not completed. */
  public synchronized List<Container> liveContainers(String applicationId) {
    List<Container> out = new ArrayList<>();
    for (TaskInfo t : app(applicationId).live) {
      if (t.container != null) {
        out.add(t.container);
      }
    }
    return out;
  }

  /** How many of the application's containers are asked for and not yet allocated. */
  public synchronized int pendingContainers(String applicationId) {
    int n = 0;
    for (TaskInfo t : app(applicationId).live) {
      if (t.pending() && !t.am()) {
        n++;
      }
    }
    return n;
  }

  /** The Sluice task of a pending or allocated container, "namespace/name" (null if none). */
  public synchronized Task task(String fullName) {
    TaskInfo t = tasks.get(fullName);
    return t == null ? null : t.proto;
  }

  /** The Sluice job of an application (null if none). */
  public synchronized Job job(String applicationId) {
    App a = apps.get(applicationId);
    return a == null ? null : a.proto;
  }

  /** The Sluice node of a host (null if none). */
  public synchronized Node sluiceNode(String host) {
    NodeInfo n = nodes.get(host);
    return n == null ? null : n.proto;
  }

  /** Whether the application is still known (a finished one leaves once its containers have). */
  public synchronized boolean hasApplication(String applicationId) {
    return apps.containsKey(applicationId);
  }

  /** ApplyDeltas batches sent so far (replace_all ones included). */
  public synchronized long batchesSent() {
    return batches;
  }
}
