package io.github.sluicesched.sluice.yarn.rm;

import io.github.sluicesched.sluice.SluiceClient;
import io.github.sluicesched.sluice.yarn.ApplicationSubmission;
import io.github.sluicesched.sluice.yarn.CycleResult;
import io.github.sluicesched.sluice.yarn.NodeHeartbeat;
import io.github.sluicesched.sluice.yarn.NodeHeartbeatResponse;
import io.github.sluicesched.sluice.yarn.QueueConfig;
import io.github.sluicesched.sluice.yarn.QueueState;
import io.github.sluicesched.sluice.yarn.SluiceYarnScheduler;
import io.grpc.StatusRuntimeException;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A YARN ResourceManager scheduler whose placements are Sluice's: load it with
 * {@code yarn.resourcemanager.scheduler.class=io.github.sluicesched.sluice.yarn.rm.SluiceResourceScheduler}.
 *
 * <p>The RM's bookkeeping is Hadoop's own ({@link AbstractYarnScheduler}, {@link SluiceAppAttempt}
 * over FiCaSchedulerApp, {@link FiCaSchedulerNode}): RMContainers, container tokens, asks,
 * node accounting, metrics. Every event is also mirrored into Sluice through the YARN-style
 * adapter ({@link SluiceYarnScheduler}): NodeManagers, queues (CapacityScheduler-style
 * properties), applications (a gang when tagged {@code sluice.gang}), their asks, containers
 * launched and completed. A scheduling thread runs Sluice cycles (propose, then commit) every
 * {@code yarn.scheduler.sluice.schedule-interval-ms} and when asks arrive; each committed bind
 * becomes an RMContainer that the AM gets on its next allocate call (the RM launches AM
 * containers itself), and each eviction a container in the AM's strict preemption contract that
 * the RM kills (exit status PREEMPTED) after {@code preemption.max-wait-before-kill-ms}.
 *
 * <p>sluiced may restart or be unreachable: events keep changing the adapter's state, and the
 * first call that gets through sends the whole state and the scheduler configuration again.
 */
public class SluiceResourceScheduler extends AbstractYarnScheduler<SluiceAppAttempt, FiCaSchedulerNode>
    implements Configurable {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceResourceScheduler.class);

  private Configuration conf;
  private SluiceClient client;
  private SluiceYarnScheduler sluice;
  private boolean usePortForNodeName;
  private boolean gangByDefault;
  private long intervalMs;
  private final ResourceCalculator calculator = new DominantResourceCalculator();

  private SluiceQueue root;
  private final Map<String, SluiceQueue> queues = new java.util.concurrent.ConcurrentSkipListMap<>();
  private final Resource used = Resource.newInstance(0, 0);
  private volatile Resource usedSnapshot = Resource.newInstance(0, 0);

  /** Applications whose managed AM has no container yet, and those Sluice knows. */
  private final Set<ApplicationId> waitingForAm = new HashSet<>();
  private final Set<ApplicationId> inSluice = new HashSet<>();
  private final Map<ApplicationId, ApplicationSubmission> submissions = new HashMap<>();
  /** The adapter's container ids and YARN's, both ways. */
  private final Map<String, ContainerId> toYarn = new HashMap<>();
  private final Map<ContainerId, String> toSluice = new HashMap<>();
  /** Containers Sluice evicted, by the adapter's id. */
  private final Set<String> evicted = new HashSet<>();
  /** How containers the RM completed ended, until their nodes have their room back. */
  private final Map<ContainerId, ContainerStatus> finished = new HashMap<>();
  /** Asks to give back to Sluice after binds that could not be carried out. */
  private final List<Runnable> reasks = new ArrayList<>();
  /** Container states for Sluice, per node, sent with the node's next heartbeat. */
  private final Map<NodeId, List<io.github.sluicesched.sluice.yarn.ContainerStatus>> statuses = new LinkedHashMap<>();
  private final Map<NodeId, io.github.sluicesched.sluice.yarn.NodeState> nodeStates = new HashMap<>();
  /** YARN's node ids by the adapter's node name. */
  private final Map<String, NodeId> yarnNodes = new HashMap<>();

  private Thread schedulingThread;
  private volatile boolean stopping;
  private boolean kicked;
  private final Object kick = new Object();

  // What happened, for operators (logs) and tests.
  private long cycles;
  private long failedCycles;
  private long preemptedKills;
  private long refusedBinds;
  /** The last RECENT_PLACEMENTS containers Sluice placed, oldest first. */
  private final BoundedHistory<Placement> placements = new BoundedHistory<>(RECENT_PLACEMENTS);
  private static final int RECENT_PLACEMENTS = 100_000;
  /**
   * The last RECENT_RELEASES containers their application master released, oldest first (under
   * the scheduler's lock).
   */
  private final Set<ContainerId> recentlyReleased = Collections.newSetFromMap(new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<ContainerId, Boolean> eldest) {
      return size() > RECENT_RELEASES;
    }
  });
  private static final int RECENT_RELEASES = 10_000;

  /** A container Sluice placed, and the cycle that placed it. */
  public record Placement(long cycle, ApplicationId application, ContainerId container, NodeId node, boolean am,
      long timeMillis) {}

  public SluiceResourceScheduler() {
    super(SluiceResourceScheduler.class.getName());
  }

  // ---- lifecycle -------------------------------------------------------------------------

  @Override
  public void serviceInit(Configuration c) throws Exception {
    setConf(c);
    applications = new java.util.concurrent.ConcurrentSkipListMap<>();
    minimumAllocation = super.getMinimumAllocation();
    initMaximumResourceCapability(super.getMaximumAllocation());
    usePortForNodeName = c.getBoolean(org.apache.hadoop.yarn.conf.YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        org.apache.hadoop.yarn.conf.YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    gangByDefault = c.getBoolean(SluiceRmConfig.GANG_DEFAULT, false);
    intervalMs = c.getLong(SluiceRmConfig.INTERVAL_MS, 200);

    String address = c.getTrimmed(SluiceRmConfig.ADDRESS);
    if (address == null || address.isEmpty()) {
      throw new IllegalArgumentException(SluiceRmConfig.ADDRESS + " is not set (host:port of sluiced)");
    }
    SluiceClient.Builder b = SluiceClient.builder(address)
        .cluster(c.getTrimmed(SluiceRmConfig.CLUSTER, SluiceRmConfig.DEFAULT_CLUSTER))
        .timeoutMillis(c.getLong(SluiceRmConfig.TIMEOUT_MS, 10_000));
    String ca = c.getTrimmed(SluiceRmConfig.TLS_CA);
    if (ca == null || ca.isEmpty()) {
      b.plaintext();
    } else {
      b.trustedCertificates(new File(ca));
    }
    String token = c.getTrimmed(SluiceRmConfig.TOKEN);
    if (token != null && !token.isEmpty()) {
      b.bearerToken(token);
    }
    client = b.build();
    SluiceYarnScheduler.Options opts = new SluiceYarnScheduler.Options()
        .namespace(c.getTrimmed(SluiceRmConfig.NAMESPACE, "yarn"))
        .preemptionGraceMillis(c.getLong(SluiceRmConfig.PREEMPTION_WAIT_MS, 15_000));
    String yaml = c.get(SluiceRmConfig.SCHEDULER_CONF);
    if (yaml != null && !yaml.isBlank()) {
      opts.schedulerConfig(yaml);
    }
    sluice = new SluiceYarnScheduler(client, opts);
    root = new SluiceQueue("root", null, null, c, this::usedCopy, this::getClusterResource);
    setQueues(queueConfiguration(c));
    super.serviceInit(c);
  }

  @Override
  public void serviceStart() throws Exception {
    try {
      sluice.start();
    } catch (StatusRuntimeException e) {
      LOG.warn("sluiced is not reachable yet ({}); the scheduling thread sends the state when it is", e.getStatus());
      sluice.markOutOfSync();
    }
    stopping = false;
    schedulingThread = new Thread(this::schedulingLoop, "SluiceSchedulingThread");
    schedulingThread.setDaemon(true);
    schedulingThread.start();
    super.serviceStart();
  }

  @Override
  public void serviceStop() throws Exception {
    stopping = true;
    if (schedulingThread != null) {
      schedulingThread.interrupt();
      schedulingThread.join(10_000);
    }
    if (client != null) {
      client.close();
    }
    super.serviceStop();
  }

  @Override
  public synchronized void setConf(Configuration c) {
    this.conf = c;
  }

  @Override
  public synchronized Configuration getConf() {
    return conf;
  }

  @Override
  public synchronized void setRMContext(RMContext ctx) {
    this.rmContext = ctx;
  }

  @Override
  public synchronized void reinitialize(Configuration c, RMContext ctx) throws IOException {
    setConf(c);
    try {
      setQueues(queueConfiguration(c));
    } catch (RuntimeException e) {
      throw new IOException("cannot apply the new queue configuration: " + e.getMessage(), e);
    }
    super.reinitialize(c, ctx);
  }

  /** The RM's configuration with capacity-scheduler.xml under it, if the class path has one. */
  private static List<QueueConfig> queueConfiguration(Configuration c) {
    Configuration q = new Configuration(false);
    if (Thread.currentThread().getContextClassLoader().getResource("capacity-scheduler.xml") != null) {
      q.addResource("capacity-scheduler.xml");
    }
    for (Map.Entry<String, String> e : c) {
      q.set(e.getKey(), e.getValue());
    }
    return SluiceRmConfig.queues(q);
  }

  private synchronized void setQueues(List<QueueConfig> configs) {
    try {
      sluice.setQueues(configs);
    } catch (StatusRuntimeException e) {
      LOG.warn("queues not sent to sluiced yet: {}", e.getStatus());
    }
    Map<String, QueueConfig> byPath = new TreeMap<>();
    for (QueueConfig q : configs) {
      byPath.put(q.path(), q);
    }
    for (QueueConfig q : configs) { // parents come before their children
      SluiceQueue existing = queues.get(q.path());
      if (existing != null) {
        existing.setConfig(q);
        continue;
      }
      SluiceQueue parent = q.parent().equals("root") ? root : queues.get(q.parent());
      queues.put(q.path(), new SluiceQueue(q.path(), parent, q, conf, this::usedCopy, this::getClusterResource));
    }
    queues.keySet().removeIf(p -> !byPath.containsKey(p));
  }

  /** A queue by full path or unique leaf name; null if none. */
  private SluiceQueue queue(String name) {
    if (name == null || name.isEmpty()) {
      name = "default";
    }
    if (name.equals("root")) {
      return root;
    }
    SluiceQueue q = queues.get(name);
    if (q != null) {
      return q;
    }
    SluiceQueue found = null;
    for (SluiceQueue c : queues.values()) {
      if (c.path().endsWith("." + name)) {
        if (found != null) {
          return null; // ambiguous
        }
        found = c;
      }
    }
    return found;
  }

  // ---- events ----------------------------------------------------------------------------

  @Override
  public void handle(SchedulerEvent event) {
    synchronized (this) {
      switch (event.getType()) {
        case NODE_ADDED -> {
          NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
          addNode(e.getAddedRMNode());
          recoverContainersOnNode(e.getContainerReports(), e.getAddedRMNode());
        }
        case NODE_REMOVED -> removeNode(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        case NODE_RESOURCE_UPDATE -> {
          NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
          updateNodeResource(e.getRMNode(), e.getResourceOption());
          registerInSluice(e.getRMNode());
        }
        case NODE_UPDATE -> nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        case APP_ADDED -> addApplication((AppAddedSchedulerEvent) event);
        case APP_ATTEMPT_ADDED -> addAttempt((AppAttemptAddedSchedulerEvent) event);
        case APP_ATTEMPT_REMOVED -> {
          AppAttemptRemovedSchedulerEvent e = (AppAttemptRemovedSchedulerEvent) event;
          removeAttempt(e.getApplicationAttemptID(), e.getFinalAttemptState(), e.getKeepContainersAcrossAppAttempts());
        }
        case APP_REMOVED -> {
          AppRemovedSchedulerEvent e = (AppRemovedSchedulerEvent) event;
          removeApplication(e.getApplicationID(), e.getFinalState());
        }
        case CONTAINER_EXPIRED -> {
          ContainerId id = ((ContainerExpiredSchedulerEvent) event).getContainerId();
          completedContainer(getRMContainer(id),
              SchedulerUtils.createAbnormalContainerStatus(id, SchedulerUtils.EXPIRED_CONTAINER),
              RMContainerEventType.EXPIRE);
        }
        case RELEASE_CONTAINER -> {
          RMContainer c = ((ReleaseContainerEvent) event).getContainer();
          completedContainer(c,
              SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(), SchedulerUtils.RELEASED_CONTAINER),
              RMContainerEventType.RELEASED);
        }
        default -> LOG.warn("event {} is not handled by the Sluice scheduler", event.getType());
      }
      flushStatuses(null);
    }
  }

  private void addNode(RMNode rmNode) {
    FiCaSchedulerNode node = new SluiceNode(rmNode, usePortForNodeName, this::nodeReleased);
    nodeTracker.addNode(node);
    nodeStates.put(rmNode.getNodeID(), io.github.sluicesched.sluice.yarn.NodeState.RUNNING);
    yarnNodes.put(toSluice(rmNode.getNodeID()).host(), rmNode.getNodeID());
    registerInSluice(rmNode);
    LOG.info("Added node {} with {}", rmNode.getNodeID(), rmNode.getTotalCapability());
  }

  private void registerInSluice(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    Resource total = node == null ? rmNode.getTotalCapability() : node.getTotalResource();
    try {
      sluice.registerNode(toSluice(rmNode.getNodeID()), rmNode.getRackName(), toSluice(total));
    } catch (StatusRuntimeException e) {
      LOG.debug("node {} not sent to sluiced yet: {}", rmNode.getNodeID(), e.getStatus());
    }
  }

  private void removeNode(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    List<RMContainer> lost = node.getCopiedListOfRunningContainers();
    for (RMContainer c : lost) {
      completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
          SchedulerUtils.LOST_CONTAINER), RMContainerEventType.KILL);
    }
    for (RMContainer c : lost) { // Sluice ends them with the node
      String sid = toSluice.remove(c.getContainerId());
      finished.remove(c.getContainerId());
      if (sid != null) {
        toYarn.remove(sid);
        evicted.remove(sid);
      }
    }
    flushStatuses(null);
    nodeTracker.removeNode(rmNode.getNodeID());
    statuses.remove(rmNode.getNodeID());
    nodeStates.remove(rmNode.getNodeID());
    yarnNodes.remove(toSluice(rmNode.getNodeID()).host());
    try {
      sluice.removeNode(toSluice(rmNode.getNodeID()));
    } catch (StatusRuntimeException e) {
      LOG.debug("node removal not sent to sluiced yet: {}", e.getStatus());
    }
  }

  @Override
  protected synchronized void nodeUpdate(RMNode rmNode) {
    super.nodeUpdate(rmNode); // launched and completed containers, through the hooks below
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    io.github.sluicesched.sluice.yarn.NodeState state = toSluice(rmNode.getState());
    nodeStates.put(rmNode.getNodeID(), state);
    double cpu = -1;
    double mem = -1;
    if (rmNode.getNodeUtilization() != null && node.getTotalResource().getMemorySize() > 0) {
      mem = 100.0 * rmNode.getNodeUtilization().getPhysicalMemory() / node.getTotalResource().getMemorySize();
      cpu = 100.0 * rmNode.getNodeUtilization().getCPU();
    }
    flushStatuses(null);
    NodeHeartbeatResponse r;
    try {
      r = sluice.nodeHeartbeat(new NodeHeartbeat(toSluice(rmNode.getNodeID()), state,
          List.of(), Math.max(-1, Math.min(100, cpu)), Math.max(-1, Math.min(100, mem))));
    } catch (StatusRuntimeException e) {
      LOG.debug("heartbeat of {} not sent to sluiced: {}", rmNode.getNodeID(), e.getStatus());
      return;
    } catch (IllegalStateException e) {
      LOG.warn("heartbeat of {}: {}", rmNode.getNodeID(), e.getMessage());
      return;
    }
    killAsSluiceSays(r.containersToCleanup());
  }

  /** Kills what Sluice says a node must stop running: preempted containers past their grace. */
  private void killAsSluiceSays(List<String> ids) {
    for (String id : ids) {
      ContainerId cid = toYarn.get(id);
      RMContainer c = cid == null ? null : getRMContainer(cid);
      if (c == null) {
        continue;
      }
      if (evicted.contains(id)) {
        preemptedKills++;
        LOG.info("Preempting container {} of {} (Sluice evicted it)", cid, cid.getApplicationAttemptId());
        completedContainer(c, SchedulerUtils.createPreemptedContainerStatus(cid, SchedulerUtils.PREEMPTED_CONTAINER),
            RMContainerEventType.KILL);
      } else {
        completedContainer(c, SchedulerUtils.createKilledContainerStatus(cid, "Killed by the Sluice scheduler"),
            RMContainerEventType.KILL);
      }
    }
    flushStatuses(null);
  }

  @Override
  protected void containerLaunchedOnNode(ContainerId id, SchedulerNode node) {
    super.containerLaunchedOnNode(id, node);
    synchronized (this) {
      String sid = toSluice.get(id);
      if (sid != null) {
        queueStatus(node.getNodeID(), io.github.sluicesched.sluice.yarn.ContainerStatus.running(sid));
      }
    }
  }

  @Override
  protected synchronized void completedContainerInternal(RMContainer rmc, ContainerStatus status,
      RMContainerEventType event) {
    Container container = rmc.getContainer();
    SluiceAppAttempt attempt = getCurrentAttemptForContainer(container.getId());
    FiCaSchedulerNode node = nodeTracker.getNode(container.getNodeId());
    if (toSluice.containsKey(container.getId())) {
      finished.put(container.getId(), status); // Sluice hears of it once the node has the room back
    }
    if (event == RMContainerEventType.RELEASED) {
      recentlyReleased.add(container.getId());
    }
    if (attempt == null) {
      LOG.info("Container {} of an unknown application completed ({})", container.getId(), event);
      return;
    }
    attempt.containerCompleted(rmc, status, event, org.apache.hadoop.yarn.nodelabels.CommonNodeLabelsManager.NO_LABEL);
    if (node != null) {
      node.releaseContainer(rmc.getContainerId(), false);
    }
    Resources.subtractFrom(used, container.getResource());
    usedChanged();
    LOG.info("Container {} of {} completed on {} ({}, exit {})", container.getId(),
        attempt.getApplicationAttemptId(), container.getNodeId(), event, status.getExitStatus());
  }

  /**
   * A node has a container's resources back (SluiceNode): at once for one that never
   * started, after its NodeManager reported it finished for one that ran. Sluice's task ends
   * now, so that Sluice never counts room the RM still holds as free.
   */
  private synchronized void nodeReleased(SluiceNode node, ContainerId id) {
    String sid = toSluice.remove(id);
    if (sid == null) {
      return;
    }
    toYarn.remove(sid);
    evicted.remove(sid);
    ContainerStatus st = finished.remove(id);
    queueStatus(node.getNodeID(), io.github.sluicesched.sluice.yarn.ContainerStatus.complete(sid,
        st == null ? org.apache.hadoop.yarn.api.records.ContainerExitStatus.ABORTED : st.getExitStatus(),
        st == null || st.getDiagnostics() == null ? "" : st.getDiagnostics()));
  }

  private void queueStatus(NodeId node, io.github.sluicesched.sluice.yarn.ContainerStatus s) {
    statuses.computeIfAbsent(node, n -> new ArrayList<>()).add(s);
  }

  /**
   * Sends the container states queued for each node (or for one) to Sluice, as heartbeats of
   * the node's last known state. The adapter applies them locally whatever the server says.
   */
  private synchronized void flushStatuses(NodeId only) {
    if (statuses.isEmpty()) {
      return;
    }
    List<String> cleanup = new ArrayList<>();
    for (NodeId n : new ArrayList<>(statuses.keySet())) {
      if (only != null && !only.equals(n)) {
        continue;
      }
      List<io.github.sluicesched.sluice.yarn.ContainerStatus> list = statuses.remove(n);
      io.github.sluicesched.sluice.yarn.NodeState state = nodeStates.get(n);
      if (state == null) {
        continue; // removed: Sluice ended its containers with the node
      }
      try {
        cleanup.addAll(sluice.nodeHeartbeat(new NodeHeartbeat(toSluice(n), state, list, -1, -1)).containersToCleanup());
      } catch (StatusRuntimeException e) {
        LOG.debug("container states of {} not sent to sluiced: {}", n, e.getStatus());
      } catch (IllegalStateException e) {
        LOG.warn("container states of {}: {}", n, e.getMessage());
      }
    }
    if (!cleanup.isEmpty()) {
      killAsSluiceSays(cleanup);
    }
  }

  // ---- applications ----------------------------------------------------------------------

  private void addApplication(AppAddedSchedulerEvent e) {
    ApplicationId id = e.getApplicationId();
    SluiceQueue q = queue(e.getQueue());
    String refusal = null;
    if (q == null) {
      refusal = "unknown or ambiguous queue " + e.getQueue();
    } else if (!q.leaf()) {
      refusal = "queue " + q.path() + " is not a leaf queue";
    } else if (q.config().state() != QueueState.RUNNING) {
      refusal = "queue " + q.path() + " is " + q.config().state();
    }
    if (refusal != null) {
      LOG.info("Rejecting application {}: {}", id, refusal);
      rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(id, RMAppEventType.APP_REJECTED, refusal));
      return;
    }
    Priority prio = e.getApplicatonPriority();
    SchedulerApplication<SluiceAppAttempt> app = new SchedulerApplication<>(q, e.getUser(), prio, e.isUnmanagedAM());
    applications.put(id, app);
    q.getMetrics().submitApp(e.getUser(), e.isUnmanagedAM());

    RMApp rmApp = rmContext.getRMApps().get(id);
    org.apache.hadoop.yarn.api.records.Resource am = null;
    if (!e.isUnmanagedAM() && rmApp != null && rmApp.getAMResourceRequests() != null
        && !rmApp.getAMResourceRequests().isEmpty()) {
      am = rmApp.getAMResourceRequests().get(0).getCapability();
    }
    boolean gang = SluiceRmConfig.gang(rmApp == null ? null : rmApp.getApplicationTags(), gangByDefault);
    ApplicationSubmission s = new ApplicationSubmission(id.toString(), rmApp == null ? "" : rmApp.getName(),
        e.getUser(), q.path(), prio == null ? 0 : prio.getPriority(), gang, am == null ? null : toSluice(am),
        rmApp == null ? System.currentTimeMillis() : rmApp.getSubmitTime());
    submissions.put(id, s);
    if (s.managedAm()) {
      // Sluice hears of the application with the attempt's AM ask, so that it never places an
      // AM container that no attempt is waiting for.
      waitingForAm.add(id);
    } else {
      submitToSluice(id);
    }
    LOG.info("Accepted application {} of {} into {} (gang: {})", id, e.getUser(), q.path(), gang);
    if (!e.getIsAppRecovering()) {
      rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(id, RMAppEventType.APP_ACCEPTED));
    }
  }

  private void submitToSluice(ApplicationId id) {
    ApplicationSubmission s = submissions.get(id);
    if (s == null || inSluice.contains(id)) {
      return;
    }
    inSluice.add(id);
    try {
      sluice.submitApplication(s);
    } catch (StatusRuntimeException e) {
      LOG.debug("application {} not sent to sluiced yet: {}", id, e.getStatus());
    }
    kick();
  }

  private void addAttempt(AppAttemptAddedSchedulerEvent e) {
    ApplicationAttemptId id = e.getApplicationAttemptId();
    SchedulerApplication<SluiceAppAttempt> app = applications.get(id.getApplicationId());
    if (app == null) {
      LOG.warn("Attempt {} of an unknown application", id);
      return;
    }
    SluiceQueue q = (SluiceQueue) app.getQueue();
    SluiceAppAttempt attempt = new SluiceAppAttempt(id, app.getUser(), q, q.getAbstractUsersManager(), rmContext,
        app.getPriority(), e.getIsAttemptRecovering());
    if (e.getTransferStateFromPreviousAttempt() && app.getCurrentAppAttempt() != null) {
      attempt.transferStateFromPreviousAttempt(app.getCurrentAppAttempt());
    }
    app.setCurrentAppAttempt(attempt);
    q.getMetrics().submitAppAttempt(app.getUser(), app.isUnmanagedAM());
    LOG.info("Added attempt {} to {}", id, q.path());
    if (!e.getIsAttemptRecovering()) {
      rmContext.getDispatcher().getEventHandler().handle(new RMAppAttemptEvent(id, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  private void removeAttempt(ApplicationAttemptId id, RMAppAttemptState state, boolean keepContainers) {
    SluiceAppAttempt attempt = getApplicationAttempt(id);
    if (attempt == null) {
      LOG.warn("Removing unknown attempt {}", id);
      return;
    }
    for (RMContainer c : attempt.getLiveContainers()) {
      if (keepContainers && c.getState() == RMContainerState.RUNNING) {
        continue;
      }
      completedContainer(c, SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(),
          SchedulerUtils.COMPLETED_APPLICATION), RMContainerEventType.KILL);
    }
    attempt.stop(state);
  }

  private void removeApplication(ApplicationId id, RMAppState state) {
    SchedulerApplication<SluiceAppAttempt> app = applications.remove(id);
    if (app == null) {
      return;
    }
    ((SluiceQueue) app.getQueue()).getAbstractUsersManager().deactivateApplication(app.getUser(), id);
    app.stop(state);
    flushStatuses(null);
    waitingForAm.remove(id);
    submissions.remove(id);
    if (inSluice.remove(id)) {
      try {
        sluice.finishApplication(id.toString());
      } catch (StatusRuntimeException e) {
        LOG.debug("end of {} not sent to sluiced yet: {}", id, e.getStatus());
      } catch (IllegalArgumentException e) {
        LOG.debug("{}", e.getMessage());
      }
    }
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updates) {
    SluiceAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null || !attempt.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("allocate of a removed, unknown or previous attempt {}", attemptId);
      return EMPTY_ALLOCATION;
    }
    normalizeResourceRequests(ask);
    Set<ContainerId> strict = new HashSet<>();
    synchronized (this) {
      releaseContainers(release, attempt);
      flushStatuses(null);
      synchronized (attempt) {
        if (attempt.isStopped()) {
          return EMPTY_ALLOCATION;
        }
        if (!ask.isEmpty()) {
          attempt.updateResourceRequests(ask);
        }
        attempt.updateBlacklist(blacklistAdditions, blacklistRemovals);
        ApplicationId appId = attemptId.getApplicationId();
        if (waitingForAm.contains(appId)) {
          // The RM asking for the AM container: Sluice's AM task stands for it.
          if (!ask.isEmpty()) {
            submitToSluice(appId);
          }
        } else if (inSluice.contains(appId)) {
          List<io.github.sluicesched.sluice.yarn.ResourceRequest> rows = new ArrayList<>();
          for (ResourceRequest r : ask) {
            rows.add(new io.github.sluicesched.sluice.yarn.ResourceRequest(r.getAllocationRequestId(),
                r.getPriority().getPriority(), r.getResourceName(), toSluice(r.getCapability()),
                r.getNumContainers(), r.getRelaxLocality()));
          }
          try {
            io.github.sluicesched.sluice.yarn.Allocation a = sluice.allocate(appId.toString(), rows, List.of());
            for (String id : a.preemption().strictContract()) {
              ContainerId cid = toYarn.get(id);
              if (cid != null) {
                strict.add(cid);
              }
            }
          } catch (StatusRuntimeException e) {
            LOG.debug("asks of {} not sent to sluiced yet: {}", appId, e.getStatus());
          } catch (IllegalArgumentException | IllegalStateException e) {
            LOG.warn("asks of {} not taken: {}", attemptId, e.getMessage());
          }
          if (!ask.isEmpty()) {
            kick();
          }
        }
        Resource headroom = Resources.componentwiseMax(Resources.subtract(getClusterResource(), used), Resources.none());
        attempt.setHeadroom(headroom);
        attempt.setApplicationHeadroomForMetrics(headroom);
        return new Allocation(attempt.pullNewlyAllocatedContainers(), headroom, strict.isEmpty() ? null : strict,
            null, null, attempt.pullUpdatedNMTokens());
      }
    }
  }

  // ---- scheduling ------------------------------------------------------------------------

  private void kick() {
    synchronized (kick) {
      kicked = true;
      kick.notifyAll();
    }
  }

  private void schedulingLoop() {
    long backoff = intervalMs;
    while (!stopping) {
      try {
        synchronized (kick) {
          if (!kicked) {
            kick.wait(backoff);
          }
          kicked = false;
        }
      } catch (InterruptedException e) {
        return;
      }
      try {
        runCycle();
        backoff = intervalMs;
      } catch (StatusRuntimeException e) {
        synchronized (this) {
          failedCycles++;
        }
        LOG.warn("Sluice cycle failed ({}); the state is sent again on the next try", e.getStatus());
        client.channel().resetConnectBackoff();
        backoff = Math.min(5_000, Math.max(backoff * 2, intervalMs));
      } catch (RuntimeException e) {
        synchronized (this) {
          failedCycles++;
        }
        LOG.error("Sluice cycle failed", e);
        backoff = Math.min(5_000, Math.max(backoff * 2, intervalMs));
      }
    }
  }

  /**
   * One Sluice cycle: propose, commit, and carry out the committed binds (RMContainers for
   * the AMs' next allocate calls) and evictions (the containers join their AMs' preemption
   * contracts and are killed after the grace period, on their nodes' heartbeats).
   */
  public synchronized CycleResult runCycle() {
    flushStatuses(null);
    CycleResult r = sluice.schedule();
    cycles++;
    for (io.github.sluicesched.sluice.yarn.Container c : r.allocated()) {
      carryOut(c);
    }
    for (io.github.sluicesched.sluice.yarn.Container c : r.preempted()) {
      evicted.add(c.id());
      LOG.info("Sluice evicts {} ({} of {})", toYarn.get(c.id()), c.id(), c.applicationId());
    }
    if (!r.preempted().isEmpty()) {
      // Without a grace period the evicted containers are due now: kill them at once rather
      // than at their nodes' next heartbeats.
      flushEvictions();
    }
    flushStatuses(null);
    for (Runnable r2 : reasks) {
      r2.run();
    }
    reasks.clear();
    return r;
  }

  /** Asks Sluice, node by node, what is due for cleanup now (evictions past their grace). */
  private void flushEvictions() {
    List<String> cleanup = new ArrayList<>();
    for (Map.Entry<NodeId, io.github.sluicesched.sluice.yarn.NodeState> e : nodeStates.entrySet()) {
      List<io.github.sluicesched.sluice.yarn.ContainerStatus> list = statuses.remove(e.getKey());
      try {
        cleanup.addAll(sluice.nodeHeartbeat(new NodeHeartbeat(toSluice(e.getKey()), e.getValue(),
            list == null ? List.of() : list, -1, -1)).containersToCleanup());
      } catch (StatusRuntimeException | IllegalStateException ex) {
        LOG.debug("evictions of {} not checked: {}", e.getKey(), ex.getMessage());
      }
    }
    killAsSluiceSays(cleanup);
  }

  /** Turns one committed bind into an RMContainer, or gives it back to Sluice if it cannot be. */
  private void carryOut(io.github.sluicesched.sluice.yarn.Container c) {
    ApplicationId appId = ApplicationId.fromString(c.applicationId());
    NodeId nodeId = yarnNodes.get(c.nodeId().host());
    SchedulerApplication<SluiceAppAttempt> app = applications.get(appId);
    SluiceAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
    FiCaSchedulerNode node = nodeId == null ? null : nodeTracker.getNode(nodeId);
    String why = null;
    SchedulerRequestKey key = null;
    if (attempt == null || attempt.isStopped()) {
      why = "no running attempt";
    } else if (nodeId == null || node == null) {
      why = "unknown node";
    } else {
      key = keyFor(attempt, c);
      if (key == null) {
        why = "no outstanding ask";
      } else if (!Resources.fitsIn(calculator, capability(attempt, key, c), node.getUnallocatedResource())) {
        why = "does not fit on " + nodeId + " (" + node.getUnallocatedResource() + " free)";
      }
    }
    RMContainer rmc = null;
    Resource res = null;
    ContainerId cid = null;
    if (why == null) {
      res = capability(attempt, key, c);
      cid = ContainerId.newContainerId(attempt.getApplicationAttemptId(), attempt.getNewContainerId());
      Container container = BuilderUtils.newContainer(cid, nodeId, node.getRMNode().getHttpAddress(), res,
          key.getPriority(), null, key.getAllocationRequestId());
      rmc = attempt.allocate(localityOf(attempt, key, node), node, key, container);
      if (rmc == null) {
        why = "the attempt took no container";
      }
    }
    if (why != null) {
      refusedBinds++;
      LOG.warn("Sluice's bind of {} ({}) on {} not carried out: {}", c.id(), c.task(), c.nodeId(), why);
      if (nodeId == null) {
        return; // the node is gone, and its tasks with it
      }
      // Sluice's task ends; what the attempt still asks for goes back to Sluice, since the
      // bind used up one container of the adapter's ask.
      queueStatus(nodeId, io.github.sluicesched.sluice.yarn.ContainerStatus.complete(c.id(),
          io.github.sluicesched.sluice.yarn.ContainerStatus.ABORTED, "not carried out: " + why));
      if (attempt != null && !attempt.isStopped() && !c.am()) {
        SluiceAppAttempt a = attempt;
        reasks.add(() -> reask(a, c));
      }
      return;
    }
    node.allocateContainer(rmc);
    Resources.addTo(used, res);
    usedChanged();
    toYarn.put(c.id(), cid);
    toSluice.put(cid, c.id());
    if (c.am()) {
      waitingForAm.remove(appId);
    }
    placements.add(new Placement(cycles, appId, cid, nodeId, c.am(), System.currentTimeMillis()));
    LOG.info("Sluice placed {} of {} on {} (cycle {}{})", cid, appId, nodeId, cycles, c.am() ? ", AM" : "");
  }

  /** Tells Sluice again how many containers of the bind's key the attempt still asks for. */
  private void reask(SluiceAppAttempt attempt, io.github.sluicesched.sluice.yarn.Container c) {
    int count = 0;
    for (SchedulerRequestKey k : attempt.getSchedulerKeys()) {
      if (k.getPriority().getPriority() == c.priority() && k.getAllocationRequestId() == c.allocationRequestId()) {
        count = attempt.getOutstandingAsksCount(k);
      }
    }
    try {
      sluice.allocate(attempt.getApplicationId().toString(), List.of(new io.github.sluicesched.sluice.yarn.ResourceRequest(
          c.allocationRequestId(), c.priority(), io.github.sluicesched.sluice.yarn.ResourceRequest.ANY, c.resource(),
          count, true)), List.of());
    } catch (RuntimeException e) {
      LOG.warn("asks of {} not given back to Sluice: {}", attempt.getApplicationAttemptId(), e.getMessage());
    }
  }

  /** The attempt's scheduler key the container answers: the AM ask, or the ask of its priority and id. */
  private static SchedulerRequestKey keyFor(SluiceAppAttempt attempt, io.github.sluicesched.sluice.yarn.Container c) {
    for (SchedulerRequestKey k : attempt.getSchedulerKeys()) {
      if (attempt.getOutstandingAsksCount(k) <= 0) {
        continue;
      }
      if (c.am() || (k.getPriority().getPriority() == c.priority()
          && k.getAllocationRequestId() == c.allocationRequestId())) {
        return k;
      }
    }
    return null;
  }

  private static Resource capability(SluiceAppAttempt attempt, SchedulerRequestKey key,
      io.github.sluicesched.sluice.yarn.Container c) {
    Resource r = attempt.getPendingAsk(key, ResourceRequest.ANY).getPerAllocationResource();
    return r != null && r.getMemorySize() > 0 ? r : toYarn(c.resource());
  }

  private static NodeType localityOf(SluiceAppAttempt attempt, SchedulerRequestKey key, FiCaSchedulerNode node) {
    if (attempt.getPendingAsk(key, node.getNodeName()).getCount() > 0) {
      return NodeType.NODE_LOCAL;
    }
    if (attempt.getPendingAsk(key, node.getRackName()).getCount() > 0) {
      return NodeType.RACK_LOCAL;
    }
    return NodeType.OFF_SWITCH;
  }

  // ---- the rest of the ResourceScheduler contract -----------------------------------------

  @Override
  public void killContainer(RMContainer container) {
    completedContainer(container, SchedulerUtils.createKilledContainerStatus(container.getContainerId(),
        "Killed by the ResourceManager"), RMContainerEventType.KILL);
  }

  @Override
  public RMContainer getRMContainer(ContainerId id) {
    SluiceAppAttempt attempt = getCurrentAttemptForContainer(id);
    return attempt == null ? null : attempt.getRMContainer(id);
  }

  @Override
  public void recover(RMState state) {
    // Work-preserving RM restart is not supported: NodeManagers re-register and the state
    // is rebuilt from their reports.
  }

  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive) throws IOException {
    SluiceQueue q = queue(queueName);
    if (q == null) {
      throw new IOException("Unknown queue: " + queueName);
    }
    return q.getQueueInfo(includeChildQueues, recursive);
  }

  @Override
  public synchronized List<QueueUserACLInfo> getQueueUserAclInfo() {
    List<QueueUserACLInfo> out = new ArrayList<>();
    for (SluiceQueue q : queues.values()) {
      out.addAll(q.getQueueUserAclInfo(null));
    }
    return out;
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return true;
  }

  @Override
  public synchronized List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    SluiceQueue q = queue(queueName);
    if (q == null) {
      return null;
    }
    List<ApplicationAttemptId> out = new ArrayList<>();
    for (SchedulerApplication<SluiceAppAttempt> app : applications.values()) {
      if (app.getQueue() == q && app.getCurrentAppAttempt() != null) {
        out.add(app.getCurrentAppAttempt().getApplicationAttemptId());
      }
    }
    return out;
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return root.getMetrics();
  }

  @Override
  public ResourceCalculator getResourceCalculator() {
    return calculator;
  }

  @Override
  public int getNumClusterNodes() {
    return nodeTracker.nodeCount();
  }

  // ---- views for operators and tests ----------------------------------------------------

  /** The adapter behind this scheduler. */
  public SluiceYarnScheduler sluice() {
    return sluice;
  }

  /** The last 100,000 containers Sluice placed, oldest first. */
  public List<Placement> placements() {
    return placements.snapshot();
  }

  public synchronized long cycles() {
    return cycles;
  }

  public synchronized long failedCycles() {
    return failedCycles;
  }

  /** Containers the RM killed because Sluice evicted them. */
  public synchronized long preemptedKills() {
    return preemptedKills;
  }

  /**
   * Whether the container's application master released it (among the last 10,000 released):
   * an AM heartbeat that re-sends its asks before it heard of containers already placed makes
   * the scheduler place more than the AM needs, as YARN's own schedulers do, and the AM
   * releases the extra ones unused.
   */
  public synchronized boolean releasedByApplication(ContainerId id) {
    return recentlyReleased.contains(id);
  }

  /** Binds that could not be carried out (the RM's view disagreed with Sluice's). */
  public synchronized long refusedBinds() {
    return refusedBinds;
  }

  /**
   * What the containers use, without the scheduler's lock: the RM asks for queue figures
   * while it holds an attempt's lock, which a cycle takes under the scheduler's.
   */
  private Resource usedCopy() {
    return usedSnapshot;
  }

  private void usedChanged() {
    usedSnapshot = Resources.clone(used);
  }

  // ---- conversions -----------------------------------------------------------------------

  /**
   * The adapter's node: named as YARN names the node (the host, or host:port with
   * yarn.scheduler.include-port-in-node-name, as when several NodeManagers share a host), so
   * that asks naming nodes find them.
   */
  private io.github.sluicesched.sluice.yarn.NodeId toSluice(NodeId id) {
    return new io.github.sluicesched.sluice.yarn.NodeId(
        usePortForNodeName ? id.getHost() + ":" + id.getPort() : id.getHost(), id.getPort());
  }

  static io.github.sluicesched.sluice.yarn.Resource toSluice(Resource r) {
    int gpus = 0;
    try {
      ResourceInformation gpu = r.getResourceInformation(ResourceInformation.GPU_URI);
      gpus = (int) gpu.getValue();
    } catch (RuntimeException e) {
      // no yarn.io/gpu resource type configured
    }
    return new io.github.sluicesched.sluice.yarn.Resource(r.getMemorySize(), r.getVirtualCores(), gpus);
  }

  static Resource toYarn(io.github.sluicesched.sluice.yarn.Resource r) {
    Resource out = Resource.newInstance(r.memoryMb(), r.vcores());
    if (r.gpus() > 0) {
      try {
        out.setResourceValue(ResourceInformation.GPU_URI, r.gpus());
      } catch (RuntimeException e) {
        // no yarn.io/gpu resource type configured
      }
    }
    return out;
  }

  static io.github.sluicesched.sluice.yarn.NodeState toSluice(org.apache.hadoop.yarn.api.records.NodeState s) {
    return io.github.sluicesched.sluice.yarn.NodeState.valueOf(s.name());
  }
}
