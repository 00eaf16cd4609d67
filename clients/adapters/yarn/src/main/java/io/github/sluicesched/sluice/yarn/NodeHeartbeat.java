package io.github.sluicesched.sluice.yarn;

import java.util.List;

/**
 * A NodeManager heartbeat (YARN's NodeStatus): the node's state, the containers it runs or
 * finished since the previous heartbeat, and optionally its utilisation in percent (negative
 * when unknown).
 */
public record NodeHeartbeat(NodeId nodeId, NodeState state, List<ContainerStatus> containers,
    double cpuUtilization, double memoryUtilization) {
  public NodeHeartbeat {
    containers = List.copyOf(containers);
  }

  /** A RUNNING node's heartbeat without utilisation. */
  public static NodeHeartbeat of(NodeId nodeId, List<ContainerStatus> containers) {
    return new NodeHeartbeat(nodeId, NodeState.RUNNING, containers, -1, -1);
  }
}
