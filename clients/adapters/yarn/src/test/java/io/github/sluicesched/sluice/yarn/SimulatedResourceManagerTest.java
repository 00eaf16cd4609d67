package io.github.sluicesched.sluice.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import sluice.v1.ClusterState.GetJobRequest;
import sluice.v1.ClusterState.GetNodeRequest;
import sluice.v1.ClusterState.GetQueueRequest;
import sluice.v1.ClusterState.ListTasksRequest;
import sluice.v1.Scheduler.Decision;
import sluice.v1.Scheduler.ExplainJobResponse;
import sluice.v1.Types.JobRef;
import sluice.v1.Types.Queue;
import sluice.v1.Types.Task;
import sluice.v1.Types.TaskRef;
import sluice.v1.Types.TaskStatus;

/**
 * The adapter end to end: a {@link SimulatedResourceManager} (NodeManagers, applications and
 * their AMs simulated in-process) schedules through a real sluiced on loopback.
 */
class SimulatedResourceManagerTest {
  private static final Resource NODE = Resource.of(8192, 8);
  private static final Resource ONE = Resource.of(1024, 1);
  private static final Resource AM = Resource.of(1024, 1);

  private SimulatedResourceManager rm;

  @BeforeEach
  void setUp(TestInfo info) throws Exception {
    rm = new SimulatedResourceManager(SluiceTestServer.client(info.getTestMethod().orElseThrow().getName()));
  }

  @AfterEach
  void tearDown() throws Exception {
    if (rm != null) {
      rm.close();
    }
  }

  private static Map<String, Integer> perHost(List<Container> cs) {
    Map<String, Integer> m = new HashMap<>();
    for (Container c : cs) {
      m.merge(c.nodeId().host(), 1, Integer::sum);
    }
    return m;
  }

  private static long count(CycleResult r, Decision.KindCase kind) {
    return r.plan().getDecisionsList().stream().filter(d -> d.getKindCase() == kind).count();
  }

  @Test
  void containersAreAllocatedWhereSluiceSaid() {
    rm.configureQueues(List.of(QueueConfig.of("root.default", 100, 100)));
    rm.registerNodeManager("host1", "/rack1", NODE);
    rm.registerNodeManager("host2", "/rack1", NODE);
    rm.registerNodeManager("host3", "/rack2", NODE);
    String app = rm.submitApplication("wordcount", "default", 0, false, AM);

    // The AM container first: the RM launches it.
    CycleResult r = rm.cycle();
    assertEquals(1, r.allocated().size());
    Container am = r.amContainers().get(0);
    assertEquals("container_1700000000000_0001_01_000001", am.id());
    assertEquals(am, rm.appMasters.get(app).amContainer);
    assertEquals(TaskStatus.TASK_STATUS_RUNNING, rm.scheduler.task(am.task()).getStatus());

    // Anywhere: 4 containers of <2048, 2>.
    rm.allocate(app, ResourceRequest.any(20, Resource.of(2048, 2), 4));
    assertEquals(4, rm.scheduler.pendingContainers(app));
    r = rm.cycle();
    assertEquals(4, r.allocated().size());
    assertEquals(4, count(r, Decision.KindCase.BIND));
    assertEquals(4, rm.appMasters.get(app).received.size());
    assertEquals(0, rm.scheduler.pendingContainers(app));
    for (Container c : r.allocated()) {
      assertEquals(20, c.priority());
      assertEquals(Resource.of(2048, 2), c.resource());
      assertTrue(rm.nm(c.nodeId().host()).running().containsKey(c.id()), c.id() + " runs on its node");
      Task t = rm.scheduler.task(c.task());
      assertEquals(c.nodeId().host(), t.getNode());
      assertEquals(TaskStatus.TASK_STATUS_RUNNING, t.getStatus());
      assertEquals(-20, t.getPriority());
    }
    // Sluice's own view agrees: every allocated task is on its container's node.
    for (Task t : rm.client.state().listTasks(ListTasksRequest.newBuilder().setCluster(rm.client.cluster())
        .setNamespace("yarn").setJob(app).build()).getTasksList()) {
      assertEquals(TaskStatus.TASK_STATUS_RUNNING, t.getStatus(), t.getName());
    }

    // Strict node locality: YARN's idiom for "host3 only".
    rm.allocate(app, ResourceRequest.node(10, "host3", ONE, 2), ResourceRequest.rack(10, "/rack2", ONE, 2, false),
        ResourceRequest.any(10, ONE, 2, false));
    r = rm.cycle();
    assertEquals(Map.of("host3", 2), perHost(r.allocated()));

    // Strict rack locality.
    rm.allocate(app, ResourceRequest.rack(5, "/rack1", ONE, 3, true), ResourceRequest.any(5, ONE, 3, false));
    r = rm.cycle();
    assertEquals(3, r.allocated().size());
    assertTrue(r.allocated().stream().allMatch(c -> Set.of("host1", "host2").contains(c.nodeId().host())));

    // Relaxed locality: host3 preferred and still has room.
    rm.allocate(app, ResourceRequest.node(30, "host3", ONE, 1), ResourceRequest.any(30, ONE, 1));
    r = rm.cycle();
    assertEquals(Map.of("host3", 1), perHost(r.allocated()));

    // A strict ask that cannot be met stays pending: host3 is full by memory once filled up.
    int free = (int) ((NODE.memoryMb() - rm.nm("host3").used().memoryMb()) / 1024);
    rm.allocate(app, ResourceRequest.node(40, "host3", ONE, free + 1), ResourceRequest.rack(40, "/rack2", ONE, 1, false),
        ResourceRequest.any(40, ONE, free + 1, false));
    r = rm.cycle();
    assertEquals(Map.of("host3", free), perHost(r.allocated()));
    assertEquals(1, rm.scheduler.pendingContainers(app));

    // The AM lowers its ask to 0: the pending task goes.
    rm.allocate(app, ResourceRequest.any(40, ONE, 0, false));
    assertEquals(0, rm.scheduler.pendingContainers(app));
    // An ask that may go nowhere (ANY without relaxLocality, no host or rack) is refused whole.
    assertThrows(IllegalArgumentException.class, () -> rm.allocate(app, List.of(ResourceRequest.any(1, ONE, 5),
        ResourceRequest.any(50, ONE, 1, false)), List.of()));
    assertEquals(0, rm.scheduler.pendingContainers(app));
    assertTrue(rm.cycle().idle());
  }

  /**
   * A cycle of more decisions than one page of a plan holds (the server sends 1000 at a time):
   * every bind becomes a container, and the commit's applied list covers all of them.
   */
  @Test
  void aCycleOfMoreThanOnePageAllocatesEveryContainer() {
    final int n = 2500;
    rm.configureQueues(List.of(QueueConfig.of("root.default", 100, 100)));
    rm.registerNodeManager("big1", "/rack1", Resource.of(4_000_000, 4000));
    String app = rm.submitApplication("wide", "default", 0, false, AM);
    assertEquals(1, rm.cycle().amContainers().size());

    rm.allocate(app, ResourceRequest.any(1, ONE, n));
    assertEquals(n, rm.scheduler.pendingContainers(app));
    CycleResult r = rm.cycle();
    assertEquals(n, count(r, Decision.KindCase.BIND), "the plan, every page");
    assertEquals(n, r.plan().getCounts().getBinds());
    assertEquals(n, r.allocated().size());
    assertEquals(0, r.rejected());
    assertEquals(n, new HashSet<>(r.allocated().stream().map(Container::id).toList()).size());
    assertEquals(n, rm.appMasters.get(app).received.size());
    assertEquals(0, rm.scheduler.pendingContainers(app));
    assertEquals(n, rm.running(app).size());
    assertTrue(rm.cycle().idle());
  }

  @Test
  void gangsAreAllOrNothing() {
    rm.configureQueues(List.of(QueueConfig.of("root.default", 100, 100)));
    rm.registerNodeManager("host1", "/rack1", Resource.of(4096, 4));
    rm.registerNodeManager("host2", "/rack1", Resource.of(4096, 4));

    // A gang with a managed AM: the AM first (a gang of one), then 8 workers that need the AM's
    // slot too: 9 vcores on 8, so nothing.
    String gang = rm.submitApplication("mpi", "root.default", 0, true, AM);
    CycleResult r = rm.cycle();
    assertEquals(1, r.amContainers().size());
    assertEquals(1, rm.scheduler.job(gang).getMinAvailable());
    rm.allocate(gang, ResourceRequest.any(1, Resource.of(512, 1), 8));
    assertEquals(9, rm.scheduler.job(gang).getMinAvailable(), "AM + 8 workers");
    r = rm.cycle();
    assertEquals(0, r.allocated().size(), "no partial gang");
    assertEquals(0, count(r, Decision.KindCase.BIND));
    assertEquals(0, rm.running(gang).size());
    ExplainJobResponse ex = rm.client.explain("yarn", gang);
    assertEquals(JobRef.newBuilder().setNamespace("yarn").setName(gang).build(), ex.getOutcome().getJob());
    assertEquals(9, ex.getOutcome().getMinAvailable());
    assertTrue(ex.getOutcome().getPending() == 8, ex.toString());

    // Seven workers fit beside the AM: all of them at once.
    rm.allocate(gang, ResourceRequest.any(1, Resource.of(512, 1), 7));
    assertEquals(8, rm.scheduler.job(gang).getMinAvailable());
    r = rm.cycle();
    assertEquals(7, r.allocated().size());
    assertEquals(7, rm.running(gang).size());

    // A gang that does not fit in what is left (nothing) waits whole, and so does an unmanaged
    // gang of 3 once one worker is back: 1 free vcore < 3.
    rm.nm(rm.running(gang).get(0).nodeId().host()).finishContainer(rm.running(gang).get(0).id(), 0);
    rm.heartbeatAll();
    String gang2 = rm.submitApplication("unmanaged-gang", "root.default", 0, true, null);
    rm.allocate(gang2, ResourceRequest.any(1, Resource.of(512, 1), 3));
    assertEquals(3, rm.scheduler.job(gang2).getMinAvailable());
    r = rm.cycle();
    assertEquals(0, r.allocated().size());
    assertEquals(1, rm.appMasters.get(gang).completed.size());
    assertEquals(ContainerStatus.SUCCESS, rm.appMasters.get(gang).completed.get(0).exitStatus());

    // Without a gang the same ask takes what there is.
    String loose = rm.submitApplication("loose", "root.default", 0, false, null);
    rm.allocate(loose, ResourceRequest.any(1, Resource.of(512, 1), 3));
    assertEquals(1, rm.scheduler.job(loose).getMinAvailable());
    r = rm.cycle();
    assertEquals(1, r.allocated().size());
    assertEquals(List.of(loose), r.allocated().stream().map(Container::applicationId).toList());

    // The first gang finishes: its containers are killed, its job goes, and the waiting gang
    // gets all three.
    rm.finishApplication(gang);
    rm.heartbeatAll(); // kill
    rm.heartbeatAll(); // report
    assertFalse(rm.scheduler.hasApplication(gang));
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> rm.client.state()
        .getJob(GetJobRequest.newBuilder().setCluster(rm.client.cluster()).setNamespace("yarn").setName(gang).build()));
    assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    r = rm.cycle();
    Map<String, Long> byApp = r.allocated().stream().collect(Collectors.groupingBy(Container::applicationId,
        Collectors.counting()));
    assertEquals(3L, byApp.get(gang2), byApp.toString());
  }

  @Test
  void queueCapacitiesAreRespected() {
    rm.configureQueues(List.of(
        QueueConfig.of("root", 100, 100),
        QueueConfig.of("root.prod", 50, 100),
        QueueConfig.of("root.dev", 50, 50),
        QueueConfig.of("root.dev.adhoc", 50, 50),
        QueueConfig.of("root.dev.etl", 50, 100),
        QueueConfig.of("root.closed", 0, 10).withState(QueueState.STOPPED)));
    rm.registerNodeManager("host1", "/rack1", NODE);
    rm.registerNodeManager("host2", "/rack1", NODE);
    assertEquals(Resource.of(16384, 16), rm.scheduler.clusterResource());

    // The queues as Sluice has them: absolute amounts of the 16-vcore cluster.
    Queue dev = rm.client.state().getQueue(GetQueueRequest.newBuilder().setCluster(rm.client.cluster())
        .setName("root.dev").build()).getQueue();
    assertEquals("root", dev.getParent());
    assertEquals(Map.of("cpu", "8", "memory", "8Gi"), dev.getCapabilityMap());
    Queue adhoc = rm.scheduler.queue("root.dev.adhoc");
    assertEquals("root.dev", adhoc.getParent());
    assertEquals(Map.of("cpu", "4000m", "memory", "4096Mi"), adhoc.getCapabilityMap());

    assertThrows(IllegalArgumentException.class, () -> rm.submitApplication("x", "root.dev", 0, false, null),
        "parent queues take no application");
    assertThrows(IllegalStateException.class, () -> rm.submitApplication("x", "closed", 0, false, null));
    assertThrows(IllegalArgumentException.class, () -> rm.submitApplication("x", "nope", 0, false, null));

    // adhoc may use 25% of the cluster: 4 vcores.
    String a = rm.submitApplication("adhoc-job", "adhoc", 0, false, null);
    rm.allocate(a, ResourceRequest.any(1, ONE, 10));
    CycleResult r = rm.cycle();
    assertEquals(4, r.allocated().size());
    // etl may use 100% of dev, but dev is capped at 50%: 4 more.
    String e = rm.submitApplication("etl-job", "root.dev.etl", 0, false, null);
    rm.allocate(e, ResourceRequest.any(1, ONE, 10));
    r = rm.cycle();
    assertEquals(4, r.allocated().size());
    // prod takes the rest.
    String p = rm.submitApplication("prod-job", "root.prod", 0, false, null);
    rm.allocate(p, ResourceRequest.any(1, Resource.of(512, 1), 20));
    r = rm.cycle();
    assertEquals(8, r.allocated().size());
    assertTrue(rm.cycle().idle(), "the cluster is full and every queue has what it deserves");

    assertEquals(4, rm.running(a).size());
    assertEquals(4, rm.running(e).size());
    assertEquals(8, rm.running(p).size());
    assertEquals(6, rm.scheduler.pendingContainers(a));
    assertEquals(12, rm.scheduler.pendingContainers(p));
    Queue devNow = rm.client.state().getQueue(GetQueueRequest.newBuilder().setCluster(rm.client.cluster())
        .setName("root.dev").build()).getQueue();
    assertEquals("8", devNow.getStatus().getAllocatedOrThrow("cpu"), devNow.getStatus().toString());

    // A third node raises every absolute amount: adhoc may now have 6 vcores, dev 12, and
    // every queue's deserved share grows by half; the new 8 vcores are shared accordingly.
    rm.registerNodeManager("host3", "/rack2", NODE);
    assertEquals(Map.of("cpu", "6000m", "memory", "6144Mi"), rm.scheduler.queue("root.dev.adhoc").getCapabilityMap());
    assertEquals(Map.of("cpu", "12000m", "memory", "12288Mi"), rm.scheduler.queue("root.prod").getDeservedMap());
    r = rm.cycle();
    assertEquals(8, r.allocated().size());
    assertTrue(r.preempted().isEmpty());
    assertEquals(6, rm.running(a).size());
    assertEquals(6, rm.running(e).size());
    assertEquals(12, rm.running(p).size());
    assertTrue(rm.cycle().idle());
  }

  @Test
  void higherPriorityApplicationPreemptsLowerOne() {
    rm.configureQueues(List.of(QueueConfig.of("root.default", 100, 100)));
    rm.registerNodeManager("host1", "/rack1", NODE);

    String low = rm.submitApplication("batch", "default", 1, false, null);
    rm.allocate(low, ResourceRequest.any(1, ONE, 8));
    CycleResult r = rm.cycle();
    assertEquals(8, r.allocated().size());
    assertEquals(8, rm.running(low).size());

    String high = rm.submitApplication("urgent", "default", 10, false, null);
    rm.allocate(high, ResourceRequest.any(1, ONE, 3));
    r = rm.schedule();
    assertEquals(0, r.allocated().size(), "nothing is free yet");
    assertEquals(3, r.preempted().size());
    assertEquals(3, r.pipelined());
    assertTrue(r.preempted().stream().allMatch(c -> c.applicationId().equals(low)));
    Set<String> victims = r.preempted().stream().map(Container::id).collect(Collectors.toSet());
    for (Decision d : r.plan().getDecisionsList()) {
      if (d.hasEvict()) {
        assertEquals("preempt", d.getEvict().getAction());
        assertEquals("yarn", d.getEvict().getForTask().getNamespace(), d.toString());
        assertTrue(d.getEvict().getForTask().getName().startsWith(high), d.toString());
      }
    }

    // The low application's AM learns it in its next allocate call: the strict contract.
    Allocation la = rm.allocate(low, List.of(), List.of());
    assertEquals(victims, la.preemption().strictContract());
    // The NodeManager kills them on its next heartbeat, reports them on the one after.
    rm.heartbeatAll();
    rm.heartbeatAll();
    la = rm.allocate(low, List.of(), List.of());
    assertTrue(la.preemption().isEmpty());
    assertEquals(victims, la.completed().stream().map(ContainerStatus::containerId).collect(Collectors.toSet()));
    assertTrue(la.completed().stream().allMatch(s -> s.exitStatus() == ContainerStatus.PREEMPTED));

    // Now the high application gets its containers where the victims were.
    r = rm.cycle();
    assertEquals(3, r.allocated().size());
    assertTrue(r.allocated().stream().allMatch(c -> c.applicationId().equals(high)));
    assertEquals(3, rm.running(high).size());
    assertEquals(5, rm.running(low).size());
    assertTrue(rm.cycle().idle());
  }

  @Test
  void underservedQueueReclaimsFromAnother() {
    rm.configureQueues(List.of(QueueConfig.of("root.a", 50, 100), QueueConfig.of("root.b", 50, 100)));
    rm.registerNodeManager("host1", "/rack1", NODE);
    String a = rm.submitApplication("elastic", "root.a", 0, false, AM);
    rm.cycle();
    rm.allocate(a, ResourceRequest.any(1, ONE, 7));
    assertEquals(7, rm.cycle().allocated().size(), "a may grow past its capacity while b is idle");

    // b's AM takes a container back from a first (YARN's inter-queue preemption).
    String b = rm.submitApplication("owner", "root.b", 0, false, AM);
    CycleResult r = rm.schedule();
    assertEquals(1, r.preempted().size());
    assertEquals(a, r.preempted().get(0).applicationId());
    assertFalse(r.preempted().get(0).am(), "AM containers are not preempted");
    Decision evict = r.plan().getDecisionsList().stream().filter(Decision::hasEvict).findFirst().orElseThrow();
    assertEquals("reclaim", evict.getEvict().getAction());
    assertEquals(TaskRef.newBuilder().setNamespace("yarn").setName(b + "-am").build(), evict.getEvict().getForTask());
    rm.pullAll();
    assertEquals(1, rm.appMasters.get(a).preemptionNotices.size());
    rm.heartbeatAll();
    rm.heartbeatAll();
    r = rm.cycle();
    assertEquals(1, r.amContainers().size());

    // Then its AM asks for 3: b gets them, a keeps its AM and 3 containers, its deserved share.
    rm.allocate(b, ResourceRequest.any(1, ONE, 3));
    for (int i = 0; i < 5 && rm.running(b).size() < 3; i++) {
      rm.cycle();
      rm.heartbeatAll();
      rm.heartbeatAll();
    }
    assertEquals(3, rm.running(b).size());
    assertEquals(3, rm.running(a).size());
    List<ContainerStatus> lost = rm.appMasters.get(a).completed;
    assertEquals(4, lost.size());
    assertTrue(lost.stream().allMatch(st -> st.exitStatus() == ContainerStatus.PREEMPTED), lost.toString());
    assertTrue(rm.cycle().idle(), "both queues have their deserved share");
  }

  @Test
  void withoutMinimumEveryContainerIsIndependent(TestInfo info) throws Exception {
    // nonGangMinAvailable(0): a low-priority application with an unmanaged AM may lose every
    // container to a higher-priority one (with the default 1, the gang plugin keeps its last).
    rm.close();
    rm = new SimulatedResourceManager(SluiceTestServer.client(info.getTestMethod().orElseThrow().getName()),
        new SluiceYarnScheduler.Options().nonGangMinAvailable(0));
    rm.configureQueues(List.of(QueueConfig.of("root.default", 100, 100)));
    rm.registerNodeManager("host1", "/rack1", Resource.of(2048, 2));
    String low = rm.submitApplication("low", "default", 0, false, null);
    assertEquals(0, rm.scheduler.job(low).getMinAvailable());
    rm.allocate(low, ResourceRequest.any(1, ONE, 2));
    assertEquals(2, rm.cycle().allocated().size());
    String high = rm.submitApplication("high", "default", 5, false, null);
    rm.allocate(high, ResourceRequest.any(1, ONE, 2));
    assertEquals(2, rm.schedule().preempted().size());
    rm.heartbeatAll();
    rm.heartbeatAll();
    assertEquals(2, rm.cycle().allocated().size());
    assertEquals(2, rm.running(high).size());
    assertEquals(0, rm.running(low).size());
  }

  @Test
  void nodeManagerStatesMapOntoSchedulability() {
    rm.configureQueues(List.of(QueueConfig.of("root.default", 100, 100)));
    NodeId h1 = rm.registerNodeManager("host1", "/rack1", NODE);
    rm.registerNodeManager("host2", "/rack1", NODE);

    // host1 is being decommissioned: it keeps its containers but takes no new one.
    rm.nm("host1").state = NodeState.DECOMMISSIONING;
    rm.nm("host1").cpuUtilization = 35;
    rm.heartbeatAll();
    assertTrue(rm.client.state().getNode(GetNodeRequest.newBuilder().setCluster(rm.client.cluster())
        .setName("host1").build()).getNode().getUnschedulable());
    assertEquals(35.0, rm.scheduler.sluiceNode("host1").getUsageOrThrow("cpu"));
    String app = rm.submitApplication("app", "default", 0, false, null);
    rm.allocate(app, ResourceRequest.any(1, ONE, 4));
    CycleResult r = rm.cycle();
    assertEquals(Map.of("host2", 4), perHost(r.allocated()));

    // Back to RUNNING: schedulable again.
    rm.nm("host1").state = NodeState.RUNNING;
    rm.heartbeatAll();
    assertFalse(rm.scheduler.sluiceNode("host1").getUnschedulable());
    rm.allocate(app, ResourceRequest.any(1, ONE, 6)); // 6 outstanding: 4 fit on host2, so host1 too
    r = rm.cycle();
    assertEquals(6, r.allocated().size());
    assertTrue(perHost(r.allocated()).containsKey("host1"));
    int onHost1 = rm.nm("host1").running().size();

    // host1 is lost: its containers are gone (ABORTED to the AM), the node leaves Sluice, and
    // the cluster shrinks.
    rm.nm("host1").state = NodeState.LOST;
    rm.heartbeat(rm.nm("host1"));
    assertNull(rm.scheduler.sluiceNode("host1"));
    assertEquals(NODE, rm.scheduler.clusterResource());
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> rm.client.state()
        .getNode(GetNodeRequest.newBuilder().setCluster(rm.client.cluster()).setName("host1").build()));
    assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    Allocation al = rm.allocate(app, List.of(), List.of());
    assertEquals(onHost1, al.completed().size());
    assertTrue(al.completed().stream().allMatch(s -> s.exitStatus() == ContainerStatus.ABORTED));
    assertThrows(IllegalStateException.class, () -> rm.scheduler.nodeHeartbeat(NodeHeartbeat.of(h1, List.of())));
  }

  @Test
  void releasedContainersAndResyncKeepSluiceInStep() {
    rm.configureQueues(List.of(QueueConfig.of("root.default", 100, 100)));
    rm.registerNodeManager("host1", "/rack1", NODE);
    String app = rm.submitApplication("app", "default", 0, false, AM);
    rm.cycle();
    rm.allocate(app, ResourceRequest.any(1, ONE, 3));
    rm.cycle();
    List<Container> running = rm.running(app);
    assertEquals(3, running.size());

    // The AM releases one: RELEASING in Sluice until the NodeManager has killed it.
    String released = running.get(0).id();
    rm.allocate(app, List.of(), List.of(released));
    assertEquals(TaskStatus.TASK_STATUS_RELEASING, rm.scheduler.task(running.get(0).task()).getStatus());
    rm.heartbeatAll();
    rm.heartbeatAll();
    Allocation al = rm.allocate(app, List.of(), List.of());
    assertEquals(List.of(released), al.completed().stream().map(ContainerStatus::containerId).toList());
    assertEquals(ContainerStatus.ABORTED, al.completed().get(0).exitStatus());
    assertNull(rm.scheduler.task(running.get(0).task()));

    // A replace_all resync leaves Sluice exactly as the adapter sees it.
    long before = rm.scheduler.batchesSent();
    rm.scheduler.resync();
    assertEquals(before + 1, rm.scheduler.batchesSent());
    List<Task> ts = rm.client.state().listTasks(ListTasksRequest.newBuilder().setCluster(rm.client.cluster())
        .setNamespace("yarn").setJob(app).build()).getTasksList();
    assertEquals(3, ts.size(), "AM + 2 containers");
    Set<String> names = new HashSet<>();
    for (Task t : ts) {
      names.add(t.getName());
      assertEquals(TaskStatus.TASK_STATUS_RUNNING, t.getStatus());
      assertNotNull(rm.scheduler.task("yarn/" + t.getName()));
    }
    assertTrue(names.contains(app + "-am"));
    assertTrue(rm.cycle().idle());

    // Finishing kills the rest; the job leaves once the NodeManager has reported them.
    rm.finishApplication(app);
    assertTrue(rm.scheduler.hasApplication(app));
    rm.heartbeatAll();
    rm.heartbeatAll();
    assertFalse(rm.scheduler.hasApplication(app));
    assertTrue(rm.nm("host1").running().isEmpty());
  }
}
