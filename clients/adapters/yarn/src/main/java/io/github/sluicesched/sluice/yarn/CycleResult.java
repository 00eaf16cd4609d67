package io.github.sluicesched.sluice.yarn;

import java.util.List;
import sluice.v1.Scheduler.Plan;

/**
 * What one scheduling cycle did, as the RM sees it.
 *
 * @param plan Sluice's plan, as proposed, whole (the client reads every page of a plan of more
 *     than 1000 decisions)
 * @param allocated containers allocated by the committed binds, in decision order (AM
 *     containers included: the RM launches those itself)
 * @param preempted containers the committed evictions take back (their applications learn it
 *     through their next allocate call; the NodeManagers kill them after the grace period)
 * @param pipelined pipeline decisions (reservations on nodes being freed); nothing to do yet
 * @param rejected decisions the commit refused because the cluster changed since the plan (of
 *     the whole plan)
 */
public record CycleResult(Plan plan, List<Container> allocated, List<Container> preempted, int pipelined,
    int rejected) {
  public CycleResult {
    allocated = List.copyOf(allocated);
    preempted = List.copyOf(preempted);
  }

  /** The AM containers among the allocated ones. */
  public List<Container> amContainers() {
    return allocated.stream().filter(Container::am).toList();
  }

  /** Whether the cycle changed nothing. */
  public boolean idle() {
    return allocated.isEmpty() && preempted.isEmpty();
  }
}
