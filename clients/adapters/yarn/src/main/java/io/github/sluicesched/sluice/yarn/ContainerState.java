package io.github.sluicesched.sluice.yarn;

/** YARN's ContainerState. */
public enum ContainerState {
  NEW,
  RUNNING,
  COMPLETE
}
