package io.github.sluicesched.sluice.yarn;

/** YARN's QueueState. */
public enum QueueState {
  /** Accepts and runs applications. */
  RUNNING,
  /** Runs what it has, accepts nothing new. */
  DRAINING,
  /** Stopped. */
  STOPPED
}
