package io.github.sluicesched.sluice.yarn;

import java.util.Set;

/**
 * What YARN's AllocateResponse tells an application master about preemption. Sluice's
 * evictions are decisions, not requests: every evicted container is in the strict contract
 * (the RM will kill it; the AM may checkpoint and release it first). The negotiable contract
 * (resources the AM may choose containers for) is not used and always empty.
 */
public record PreemptionMessage(Set<String> strictContract) {
  public static final PreemptionMessage NONE = new PreemptionMessage(Set.of());

  public PreemptionMessage {
    strictContract = Set.copyOf(strictContract);
  }

  public boolean isEmpty() {
    return strictContract.isEmpty();
  }
}
