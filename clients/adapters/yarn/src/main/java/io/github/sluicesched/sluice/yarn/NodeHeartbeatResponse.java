package io.github.sluicesched.sluice.yarn;

import java.util.List;

/** What the RM answers a NodeManager heartbeat with: the containers to kill. */
public record NodeHeartbeatResponse(List<String> containersToCleanup) {
  public NodeHeartbeatResponse {
    containersToCleanup = List.copyOf(containersToCleanup);
  }
}
