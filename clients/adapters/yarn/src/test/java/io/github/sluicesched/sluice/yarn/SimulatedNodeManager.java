package io.github.sluicesched.sluice.yarn;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A simulated NodeManager: runs the containers it is told to start, kills those the RM's
 * heartbeat response names, and reports both in its next heartbeat. It refuses (with an
 * AssertionError) a container that does not fit in what is left of its capability, so every
 * over-allocation by the scheduler fails the test.
 */
final class SimulatedNodeManager {
  final NodeId id;
  final String rack;
  final Resource capability;
  NodeState state = NodeState.RUNNING;
  double cpuUtilization = -1;
  double memoryUtilization = -1;
  private final Map<String, Container> running = new LinkedHashMap<>();
  private final List<ContainerStatus> completed = new ArrayList<>();

  SimulatedNodeManager(NodeId id, String rack, Resource capability) {
    this.id = id;
    this.rack = rack;
    this.capability = capability;
  }

  Resource used() {
    Resource r = Resource.NONE;
    for (Container c : running.values()) {
      r = r.plus(c.resource());
    }
    return r;
  }

  Map<String, Container> running() {
    return running;
  }

  void startContainer(Container c) {
    if (!c.nodeId().equals(id)) {
      throw new AssertionError("container " + c.id() + " for " + c.nodeId() + " started on " + id);
    }
    if (!used().plus(c.resource()).fitsIn(capability)) {
      throw new AssertionError("node " + id + " over-allocated: " + used() + " used + " + c.resource()
          + " > " + capability);
    }
    if (running.putIfAbsent(c.id(), c) != null) {
      throw new AssertionError("container " + c.id() + " started twice");
    }
  }

  /** The container's process ends on its own with an exit code. */
  void finishContainer(String containerId, int exitStatus) {
    if (running.remove(containerId) != null) {
      completed.add(ContainerStatus.complete(containerId, exitStatus, "exited with " + exitStatus));
    }
  }

  NodeHeartbeat heartbeat() {
    List<ContainerStatus> statuses = new ArrayList<>();
    for (String id : running.keySet()) {
      statuses.add(ContainerStatus.running(id));
    }
    statuses.addAll(completed);
    completed.clear();
    return new NodeHeartbeat(id, state, statuses, cpuUtilization, memoryUtilization);
  }

  void handle(NodeHeartbeatResponse r) {
    for (String id : r.containersToCleanup()) {
      if (running.remove(id) != null) {
        completed.add(ContainerStatus.complete(id, ContainerStatus.KILLED_BY_RESOURCEMANAGER, "killed by the RM"));
      }
    }
  }
}
