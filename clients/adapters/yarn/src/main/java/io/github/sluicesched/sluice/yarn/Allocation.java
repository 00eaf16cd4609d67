package io.github.sluicesched.sluice.yarn;

import java.util.List;

/**
 * The scheduler's answer to an application master's allocate call (the scheduling part of
 * YARN's AllocateResponse): containers allocated since the previous call, containers that
 * completed since then, and the containers the RM is taking back.
 */
public record Allocation(List<Container> allocated, List<ContainerStatus> completed, PreemptionMessage preemption) {
  public Allocation {
    allocated = List.copyOf(allocated);
    completed = List.copyOf(completed);
  }
}
