package io.github.sluicesched.sluice.yarn;

/**
 * A container's state as a NodeManager reports it and as an application master learns it
 * (YARN's ContainerStatus).
 */
public record ContainerStatus(String containerId, ContainerState state, int exitStatus, String diagnostics) {
  /** YARN's ContainerExitStatus values used here. */
  public static final int SUCCESS = 0;
  public static final int INVALID = -1000;
  public static final int ABORTED = -100;
  public static final int PREEMPTED = -102;
  public static final int KILLED_BY_APPMASTER = -105;
  public static final int KILLED_BY_RESOURCEMANAGER = -106;

  public static ContainerStatus running(String id) {
    return new ContainerStatus(id, ContainerState.RUNNING, INVALID, "");
  }

  public static ContainerStatus complete(String id, int exitStatus, String diagnostics) {
    return new ContainerStatus(id, ContainerState.COMPLETE, exitStatus, diagnostics);
  }
}
