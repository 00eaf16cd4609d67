package io.github.sluicesched.sluice.yarn;

/**
 * A YARN resource vector: memory in MB, virtual cores and GPUs (the {@code yarn.io/gpu}
 * resource type). Immutable.
 */
public record Resource(long memoryMb, int vcores, int gpus) {
  /** Nothing. */
  public static final Resource NONE = new Resource(0, 0, 0);

  public Resource {
    if (memoryMb < 0 || vcores < 0 || gpus < 0) {
      throw new IllegalArgumentException("negative resource: " + memoryMb + "MB " + vcores + "vc " + gpus + "gpu");
    }
  }

  /** memoryMb and vcores, no GPU. */
  public static Resource of(long memoryMb, int vcores) {
    return new Resource(memoryMb, vcores, 0);
  }

  /** memoryMb, vcores and GPUs. */
  public static Resource of(long memoryMb, int vcores, int gpus) {
    return new Resource(memoryMb, vcores, gpus);
  }

  public Resource plus(Resource o) {
    return new Resource(memoryMb + o.memoryMb, vcores + o.vcores, gpus + o.gpus);
  }

  public Resource minus(Resource o) {
    return new Resource(memoryMb - o.memoryMb, vcores - o.vcores, gpus - o.gpus);
  }

  /** Whether this fits in other in every dimension. */
  public boolean fitsIn(Resource o) {
    return memoryMb <= o.memoryMb && vcores <= o.vcores && gpus <= o.gpus;
  }

  @Override
  public String toString() {
    return "<memory:" + memoryMb + ", vCores:" + vcores + (gpus > 0 ? ", yarn.io/gpu:" + gpus : "") + ">";
  }
}
