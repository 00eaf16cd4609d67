package io.github.sluicesched.sluice.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import sluice.v1.Types.Affinity;
import sluice.v1.Types.Node;
import sluice.v1.Types.Queue;

/** The pure mapping, without a server. */
class YarnMappingTest {
  private final YarnMapping m = new YarnMapping();
  private static final Resource C = Resource.of(1024, 1);

  @Test
  void resourcesBecomeQuantities() {
    assertEquals(Map.of("cpu", "2", "memory", "4096Mi"), m.resources(Resource.of(4096, 2)));
    assertEquals(Map.of("cpu", "8", "memory", "65536Mi", "nvidia.com/gpu", "4"), m.resources(Resource.of(65536, 8, 4)));
    assertEquals(Map.of("cpu", "4000m", "memory", "8192Mi"), m.share(Resource.of(32768, 16), 0.25));
  }

  @Test
  void nodeManagerBecomesNode() {
    Node n = m.node(new NodeId("host1", 45454), "/rack1", Resource.of(8192, 8, 1), NodeState.RUNNING, 40, -1);
    assertEquals("host1", n.getName());
    assertEquals("host1", n.getLabelsOrThrow(YarnMapping.HOSTNAME_LABEL));
    assertEquals("/rack1", n.getLabelsOrThrow(YarnMapping.DEFAULT_RACK_LABEL));
    assertEquals("1", n.getAllocatableOrThrow("nvidia.com/gpu"));
    assertFalse(n.getUnschedulable());
    assertEquals(Map.of("cpu", 40.0), n.getUsageMap());
    for (NodeState s : List.of(NodeState.DECOMMISSIONING, NodeState.UNHEALTHY, NodeState.NEW)) {
      assertTrue(m.node(new NodeId("h", 1), null, C, s, -1, -1).getUnschedulable(), s.name());
    }
  }

  @Test
  void queueHierarchyBecomesAbsoluteAmounts() {
    List<Queue> qs = m.queues(List.of(
        QueueConfig.of("root", 100, 100),
        QueueConfig.of("root.dev", 40, 50),
        QueueConfig.of("root.dev.adhoc", 50, 50),
        QueueConfig.of("root.prod", 60, 100).withState(QueueState.STOPPED).withPriority(5)),
        Resource.of(16384, 16));
    assertEquals(List.of("root.dev", "root.prod", "root.dev.adhoc"), qs.stream().map(Queue::getName).toList());
    Queue dev = qs.get(0);
    Queue prod = qs.get(1);
    Queue adhoc = qs.get(2);
    assertEquals("root", dev.getParent());
    assertEquals("root.dev", adhoc.getParent());
    assertEquals(40, dev.getWeight());
    assertEquals(Map.of("cpu", "6400m", "memory", "6554Mi"), dev.getDeservedMap());
    assertEquals(Map.of("cpu", "8000m", "memory", "8192Mi"), dev.getCapabilityMap());
    assertEquals(Map.of("cpu", "3200m", "memory", "3277Mi"), adhoc.getDeservedMap());
    assertEquals(Map.of("cpu", "4000m", "memory", "4096Mi"), adhoc.getCapabilityMap());
    assertTrue(prod.getCapabilityMap().isEmpty(), "100% maximum capacity is no capability");
    assertEquals(sluice.v1.Types.QueueState.QUEUE_STATE_CLOSED, prod.getState());
    assertEquals(5, prod.getPriority());
    assertThrows(IllegalArgumentException.class,
        () -> m.queues(List.of(QueueConfig.of("root.a.b", 10, 10)), Resource.NONE));
    assertThrows(IllegalArgumentException.class, () -> QueueConfig.of("a.b", 10, 10));
    assertThrows(IllegalArgumentException.class, () -> QueueConfig.of("root.a", 60, 50));
  }

  @Test
  void anyWithoutPreferencesGoesAnywhere() {
    assertEquals(YarnMapping.Locality.ANYWHERE, m.locality(List.of(ResourceRequest.any(1, C, 3))));
  }

  @Test
  void relaxedLocalityIsAPreference() {
    YarnMapping.Locality l = m.locality(List.of(
        ResourceRequest.node(1, "host1", C, 1),
        ResourceRequest.node(1, "host2", C, 1),
        ResourceRequest.rack(1, "/rack1", C, 2, true),
        ResourceRequest.any(1, C, 2)));
    assertTrue(l.nodeSelector().isEmpty());
    Affinity a = l.affinity();
    assertEquals(0, a.getNodeRequiredCount());
    assertEquals(2, a.getNodePreferredCount());
    assertEquals(100, a.getNodePreferred(0).getWeight());
    assertEquals(List.of("host1", "host2"), a.getNodePreferred(0).getMatchExpressions(0).getValuesList());
    assertEquals(50, a.getNodePreferred(1).getWeight());
    assertEquals(YarnMapping.DEFAULT_RACK_LABEL, a.getNodePreferred(1).getMatchExpressions(0).getKey());
  }

  @Test
  void strictNodeLocalityIsANodeSelector() {
    // YARN's idiom for "only host3": node row, rack row without relaxLocality, ANY without.
    YarnMapping.Locality l = m.locality(List.of(
        ResourceRequest.node(1, "host3", C, 2),
        ResourceRequest.rack(1, "/rack2", C, 2, false),
        ResourceRequest.any(1, C, 2, false)));
    assertEquals(Map.of(YarnMapping.HOSTNAME_LABEL, "host3"), l.nodeSelector());
    assertNull(l.affinity());
  }

  @Test
  void strictRackLocalityIsARackSelector() {
    YarnMapping.Locality l = m.locality(List.of(
        ResourceRequest.rack(1, "/rack1", C, 2, true),
        ResourceRequest.any(1, C, 2, false)));
    assertEquals(Map.of(YarnMapping.DEFAULT_RACK_LABEL, "/rack1"), l.nodeSelector());
  }

  @Test
  void strictLocalityOverSeveralPlacesIsRequiredAffinity() {
    YarnMapping.Locality l = m.locality(List.of(
        ResourceRequest.node(1, "host1", C, 1),
        ResourceRequest.rack(1, "/rack2", C, 1, true),
        ResourceRequest.any(1, C, 2, false)));
    Affinity a = l.affinity();
    assertEquals(2, a.getNodeRequiredCount(), "host1 OR rack2");
    assertEquals(YarnMapping.HOSTNAME_LABEL, a.getNodeRequired(0).getMatchExpressions(0).getKey());
    assertEquals(YarnMapping.DEFAULT_RACK_LABEL, a.getNodeRequired(1).getMatchExpressions(0).getKey());
    assertThrows(IllegalArgumentException.class, () -> m.locality(List.of(ResourceRequest.any(1, C, 2, false))));
  }

  @Test
  void requestPriorityFlips() {
    assertTrue(YarnMapping.taskPriority(10) > YarnMapping.taskPriority(20), "YARN serves 10 before 20");
    assertEquals("p20-id0-1024mb-1vc", new SchedulerKey(0, 20, C).role());
    assertEquals("p1-id7-2048mb-4vc-2gpu", new SchedulerKey(7, 1, Resource.of(2048, 4, 2)).role());
  }
}
