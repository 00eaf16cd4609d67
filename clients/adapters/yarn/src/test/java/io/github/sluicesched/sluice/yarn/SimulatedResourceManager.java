package io.github.sluicesched.sluice.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.github.sluicesched.sluice.SluiceClient;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import sluice.v1.Scheduler.Decision;

/**
 * A simulated YARN ResourceManager for the tests: the RM services a real RM has
 * (ResourceTrackerService for NodeManagers, ClientRMService for submissions,
 * ApplicationMasterService for AM allocate calls, the AM launcher, the scheduling loop), with
 * {@link SluiceYarnScheduler} as its scheduler and a real sluiced behind it. NodeManagers and
 * application masters are simulated in-process: an AM launches every container it receives on
 * its NodeManager, and NodeManagers check that what they are told to run fits.
 *
 * <p>Every cycle also checks that each container the RM hands out is on the node Sluice's bind
 * decision named.
 */
final class SimulatedResourceManager implements AutoCloseable {
  static final long CLUSTER_TIMESTAMP = 1_700_000_000_000L;

  final SluiceClient client;
  final SluiceYarnScheduler scheduler;
  final AtomicLong clock = new AtomicLong(CLUSTER_TIMESTAMP);
  final Map<String, SimulatedNodeManager> nodeManagers = new LinkedHashMap<>();
  final Map<String, AppMaster> appMasters = new LinkedHashMap<>();
  private int appSeq;

  /** What a simulated application master has seen. */
  static final class AppMaster {
    final String applicationId;
    final List<Container> received = new ArrayList<>();
    final List<ContainerStatus> completed = new ArrayList<>();
    final Set<String> preemptionNotices = new LinkedHashSet<>();
    Container amContainer;

    AppMaster(String applicationId) {
      this.applicationId = applicationId;
    }
  }

  SimulatedResourceManager(SluiceClient client, SluiceYarnScheduler.Options opts) {
    this.client = client;
    this.scheduler = new SluiceYarnScheduler(client, opts.clock(clock::get));
    this.scheduler.start();
  }

  SimulatedResourceManager(SluiceClient client) {
    this(client, new SluiceYarnScheduler.Options());
  }

  /** CapacityScheduler queue configuration (capacity-scheduler.xml, refreshQueues). */
  void configureQueues(Collection<QueueConfig> queues) {
    scheduler.setQueues(queues);
  }

  /** ResourceTrackerService.registerNodeManager. */
  NodeId registerNodeManager(String host, String rack, Resource capability) {
    NodeId id = new NodeId(host, 45454);
    nodeManagers.put(host, new SimulatedNodeManager(id, rack, capability));
    scheduler.registerNode(id, rack, capability);
    return id;
  }

  SimulatedNodeManager nm(String host) {
    return nodeManagers.get(host);
  }

  /** One heartbeat of every NodeManager (ResourceTrackerService.nodeHeartbeat). */
  void heartbeatAll() {
    for (SimulatedNodeManager nm : new ArrayList<>(nodeManagers.values())) {
      heartbeat(nm);
    }
  }

  void heartbeat(SimulatedNodeManager nm) {
    NodeHeartbeat hb = nm.heartbeat();
    nm.handle(scheduler.nodeHeartbeat(hb));
    if (hb.state().gone()) {
      nodeManagers.remove(nm.id.host());
    }
  }

  /** ClientRMService.submitApplication; returns the new application id. */
  String submitApplication(String name, String queue, int priority, boolean gang, Resource amResource) {
    String id = String.format("application_%d_%04d", CLUSTER_TIMESTAMP, ++appSeq);
    scheduler.submitApplication(new ApplicationSubmission(id, name, "alice", queue, priority, gang, amResource,
        clock.incrementAndGet()));
    appMasters.put(id, new AppMaster(id));
    return id;
  }

  /**
   * ApplicationMasterService.allocate from the application's AM; the AM then launches the
   * containers it received on their NodeManagers (ContainerManagementProtocol.startContainers).
   */
  Allocation allocate(String applicationId, List<ResourceRequest> asks, List<String> releases) {
    Allocation a = scheduler.allocate(applicationId, asks, releases);
    AppMaster am = appMasters.get(applicationId);
    for (Container c : a.allocated()) {
      am.received.add(c);
      launch(c);
    }
    am.completed.addAll(a.completed());
    am.preemptionNotices.addAll(a.preemption().strictContract());
    return a;
  }

  Allocation allocate(String applicationId, ResourceRequest... asks) {
    return allocate(applicationId, List.of(asks), List.of());
  }

  private void launch(Container c) {
    SimulatedNodeManager nm = nodeManagers.get(c.nodeId().host());
    assertNotNull(nm, "container " + c.id() + " on unknown node " + c.nodeId());
    nm.startContainer(c);
  }

  /**
   * One pass of the scheduling loop: a Sluice cycle; the AM launcher starts AM containers.
   * Checks that every container is on the node its bind decision named.
   */
  CycleResult schedule() {
    CycleResult r = scheduler.schedule();
    Map<String, String> bindNode = new LinkedHashMap<>();
    for (Decision d : r.plan().getDecisionsList()) {
      if (d.hasBind()) {
        bindNode.put(SluiceClient.fullName(d.getBind().getTask()), d.getBind().getNode());
      }
    }
    for (Container c : r.allocated()) {
      assertEquals(bindNode.get(c.task()), c.nodeId().host(),
          "container " + c.id() + " of task " + c.task() + " is not where Sluice bound it");
    }
    for (Container c : r.amContainers()) {
      AppMaster am = appMasters.get(c.applicationId());
      am.amContainer = c;
      launch(c);
    }
    return r;
  }

  /**
   * The usual round: schedule, every AM pulls (and launches) what it got, NodeManagers report
   * their containers running. Returns the cycle's result.
   */
  CycleResult cycle() {
    CycleResult r = schedule();
    pullAll();
    heartbeatAll();
    return r;
  }

  /** Every AM of a known application calls allocate with no new asks. */
  void pullAll() {
    for (String app : new ArrayList<>(appMasters.keySet())) {
      if (scheduler.hasApplication(app)) {
        allocate(app, List.of(), List.of());
      }
    }
  }

  /** Containers of the application running on NodeManagers. */
  List<Container> running(String applicationId) {
    List<Container> out = new ArrayList<>();
    for (SimulatedNodeManager nm : nodeManagers.values()) {
      for (Container c : nm.running().values()) {
        if (c.applicationId().equals(applicationId) && !c.am()) {
          out.add(c);
        }
      }
    }
    return out;
  }

  /** Unregister (FINISHED): the RM removes the application. */
  void finishApplication(String applicationId) {
    scheduler.finishApplication(applicationId);
  }

  @Override
  public void close() throws InterruptedException {
    client.close();
  }
}
