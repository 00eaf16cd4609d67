package io.github.sluicesched.sluice.yarn;

/**
 * An application master's ask, as YARN's ResourceRequest: numContainers containers of a
 * capability at a priority, at a resource name that is a host, a rack ("/rack1") or
 * {@link #ANY} ("*"). As in YARN, the asks of one scheduler key (allocationRequestId, priority,
 * capability) form a table by resource name; the ANY row's numContainers is how many
 * containers are outstanding, and the host and rack rows say where they should go.
 * relaxLocality false on the ANY row keeps the containers on the named hosts and racks; false
 * on a rack row keeps them on the named hosts of that rack.
 *
 * <p>YARN request priorities are served smallest number first (MapReduce asks for reduces at
 * 10 and maps at 20).
 */
public record ResourceRequest(long allocationRequestId, int priority, String resourceName, Resource capability,
    int numContainers, boolean relaxLocality) {
  /** The resource name that means anywhere. */
  public static final String ANY = "*";

  public ResourceRequest {
    if (resourceName == null || resourceName.isEmpty()) {
      throw new IllegalArgumentException("empty resourceName");
    }
    if (capability == null) {
      throw new IllegalArgumentException("null capability");
    }
    if (numContainers < 0) {
      throw new IllegalArgumentException("negative numContainers");
    }
  }

  /** n containers anywhere (the ANY row, relaxLocality true). */
  public static ResourceRequest any(int priority, Resource capability, int n) {
    return new ResourceRequest(0, priority, ANY, capability, n, true);
  }

  /** The ANY row with relaxLocality given. */
  public static ResourceRequest any(int priority, Resource capability, int n, boolean relaxLocality) {
    return new ResourceRequest(0, priority, ANY, capability, n, relaxLocality);
  }

  /** A host row. */
  public static ResourceRequest node(int priority, String host, Resource capability, int n) {
    return new ResourceRequest(0, priority, host, capability, n, true);
  }

  /** A rack row ("/rack1"). */
  public static ResourceRequest rack(int priority, String rack, Resource capability, int n, boolean relaxLocality) {
    return new ResourceRequest(0, priority, rack, capability, n, relaxLocality);
  }

  /** The same row with another allocationRequestId. */
  public ResourceRequest withAllocationRequestId(long id) {
    return new ResourceRequest(id, priority, resourceName, capability, numContainers, relaxLocality);
  }

  public boolean isAny() {
    return ANY.equals(resourceName);
  }

  /** Rack names start with "/", as YARN's topology scripts give them. */
  public boolean isRack() {
    return resourceName.startsWith("/");
  }

  public boolean isNode() {
    return !isAny() && !isRack();
  }

  /** The scheduler key this row belongs to. */
  public SchedulerKey key() {
    return new SchedulerKey(allocationRequestId, priority, capability);
  }
}
