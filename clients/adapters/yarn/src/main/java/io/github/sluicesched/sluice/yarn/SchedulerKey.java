package io.github.sluicesched.sluice.yarn;

/**
 * What YARN groups one application's asks by (SchedulerRequestKey): allocationRequestId,
 * priority and capability. The containers of one key are the tasks of one Sluice role.
 */
public record SchedulerKey(long allocationRequestId, int priority, Resource capability) {
  /**
   * The Sluice role of the key's tasks, for example "p20-id0-1024mb-1vc" (plus "-2gpu" with
   * GPUs).
   */
  public String role() {
    return "p" + priority + "-id" + allocationRequestId + "-" + capability.memoryMb() + "mb-" + capability.vcores()
        + "vc" + (capability.gpus() > 0 ? "-" + capability.gpus() + "gpu" : "");
  }
}
