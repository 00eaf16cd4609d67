package io.github.sluicesched.sluice.yarn;

/**
 * A container the scheduler allocated: YARN's Container (id, node, resource, priority) plus the
 * application and request it satisfies and the Sluice task behind it.
 *
 * @param id "container_CLUSTERTIMESTAMP_APP_01_NNNNNN"; number 1 is the AM container
 * @param applicationId owning application
 * @param nodeId node the container runs on (Sluice's bind node)
 * @param resource the capability of the request it satisfies
 * @param priority the request's YARN priority
 * @param allocationRequestId the request's allocationRequestId
 * @param task the Sluice task, "namespace/name"
 * @param am whether this is the application's AM container
 */
public record Container(String id, String applicationId, NodeId nodeId, Resource resource, int priority,
    long allocationRequestId, String task, boolean am) {}
