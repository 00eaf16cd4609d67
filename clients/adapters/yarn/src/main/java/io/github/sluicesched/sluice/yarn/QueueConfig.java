package io.github.sluicesched.sluice.yarn;

/**
 * One queue of a CapacityScheduler-style hierarchy, as in capacity-scheduler.xml: its full
 * path ("root.a.b"), its capacity and maximum capacity in percent of its parent, its state
 * and its priority.
 *
 * @param path full path starting with "root"
 * @param capacity guaranteed share of the parent, in percent (0 to 100)
 * @param maximumCapacity hard limit as a share of the parent, in percent (capacity to 100)
 * @param state queue state
 * @param priority queue priority (higher is served first)
 */
public record QueueConfig(String path, double capacity, double maximumCapacity, QueueState state, int priority) {
  public QueueConfig {
    if (path == null || !(path.equals("root") || path.startsWith("root.")) || path.endsWith(".")
        || path.contains("..")) {
      throw new IllegalArgumentException("queue path must be root or start with root.: " + path);
    }
    if (capacity < 0 || capacity > 100 || maximumCapacity < capacity || maximumCapacity > 100) {
      throw new IllegalArgumentException("queue " + path + ": need 0 <= capacity (" + capacity
          + ") <= maximum-capacity (" + maximumCapacity + ") <= 100");
    }
    if (state == null) {
      state = QueueState.RUNNING;
    }
  }

  /** A running queue with priority 0. */
  public static QueueConfig of(String path, double capacity, double maximumCapacity) {
    return new QueueConfig(path, capacity, maximumCapacity, QueueState.RUNNING, 0);
  }

  /** The parent's path; null for root. */
  public String parent() {
    int i = path.lastIndexOf('.');
    return i < 0 ? null : path.substring(0, i);
  }

  /** The last element of the path. */
  public String leafName() {
    return path.substring(path.lastIndexOf('.') + 1);
  }

  public QueueConfig withState(QueueState s) {
    return new QueueConfig(path, capacity, maximumCapacity, s, priority);
  }

  public QueueConfig withPriority(int p) {
    return new QueueConfig(path, capacity, maximumCapacity, state, p);
  }
}
