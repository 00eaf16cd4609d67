package io.github.sluicesched.sluice.yarn;

/**
 * What a client submits (YARN's ApplicationSubmissionContext, reduced to what scheduling
 * needs).
 *
 * @param applicationId "application_CLUSTERTIMESTAMP_SEQUENCE"
 * @param name application name
 * @param user submitting user
 * @param queue leaf queue, by full path ("root.a.b") or by leaf name when unique ("b")
 * @param priority application priority; higher is more important (YARN's application priority)
 * @param gang all-or-nothing: the application's outstanding containers (and its AM) are placed
 *     together or not at all. Not a YARN field: a real RM would take it from an application
 *     tag or the scheduling environment (see README).
 * @param amResource the AM container's capability; null for an unmanaged AM (runs outside the
 *     cluster and takes no container)
 * @param submitTime submission time in epoch milliseconds (orders applications FIFO)
 */
public record ApplicationSubmission(String applicationId, String name, String user, String queue, int priority,
    boolean gang, Resource amResource, long submitTime) {
  public ApplicationSubmission {
    if (applicationId == null || applicationId.isEmpty()) {
      throw new IllegalArgumentException("empty applicationId");
    }
    if (queue == null || queue.isEmpty()) {
      throw new IllegalArgumentException("application " + applicationId + ": empty queue");
    }
    if (name == null) {
      name = "";
    }
    if (user == null) {
      user = "";
    }
  }

  /** Whether the AM takes a container (false for an unmanaged AM). */
  public boolean managedAm() {
    return amResource != null;
  }
}
