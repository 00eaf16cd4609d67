package io.github.sluicesched.sluice.yarn;

/** A NodeManager's identity, host and port, as YARN's NodeId. */
public record NodeId(String host, int port) {
  public NodeId {
    if (host == null || host.isEmpty()) {
      throw new IllegalArgumentException("empty host");
    }
  }

  /** "host:port". */
  @Override
  public String toString() {
    return host + ":" + port;
  }
}
