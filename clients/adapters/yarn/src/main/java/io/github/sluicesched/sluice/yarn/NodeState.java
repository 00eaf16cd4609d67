package io.github.sluicesched.sluice.yarn;

/** YARN's NodeState. Only RUNNING nodes take new containers. */
public enum NodeState {
  NEW,
  RUNNING,
  UNHEALTHY,
  DECOMMISSIONING,
  DECOMMISSIONED,
  LOST,
  REBOOTED,
  SHUTDOWN;

  /** Whether new containers may be placed on a node in this state (RUNNING only). */
  public boolean schedulable() {
    return this == RUNNING;
  }

  /** Whether the node has left the cluster: its containers are gone and it is removed. */
  public boolean gone() {
    return this == DECOMMISSIONED || this == LOST || this == REBOOTED || this == SHUTDOWN;
  }
}
