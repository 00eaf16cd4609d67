package io.github.sluicesched.sluice.yarn.rm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.sluicesched.sluice.yarn.QueueConfig;
import io.github.sluicesched.sluice.yarn.QueueState;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** The yarn-site.xml side: queues from CapacityScheduler-style properties, gangs from tags. */
class SluiceRmConfigTest {
  @Test
  void queuesFromCapacitySchedulerProperties() {
    Configuration c = new Configuration(false);
    c.set("yarn.scheduler.capacity.root.queues", "prod, dev");
    c.set("yarn.scheduler.capacity.root.prod.capacity", "70");
    c.set("yarn.scheduler.capacity.root.prod.priority", "5");
    c.set("yarn.scheduler.capacity.root.dev.capacity", "30");
    c.set("yarn.scheduler.capacity.root.dev.maximum-capacity", "50");
    c.set("yarn.scheduler.capacity.root.dev.queues", "adhoc");
    c.set("yarn.scheduler.capacity.root.dev.adhoc.capacity", "100");
    c.set("yarn.scheduler.capacity.root.dev.adhoc.state", "stopped");
    List<QueueConfig> qs = SluiceRmConfig.queues(c);
    assertEquals(List.of(
        new QueueConfig("root.prod", 70, 100, QueueState.RUNNING, 5),
        new QueueConfig("root.dev", 30, 50, QueueState.RUNNING, 0),
        new QueueConfig("root.dev.adhoc", 100, 100, QueueState.STOPPED, 0)), qs);
  }

  @Test
  void withoutQueuesOneDefaultQueueHasEverything() {
    assertEquals(List.of(QueueConfig.of("root.default", 100, 100)), SluiceRmConfig.queues(new Configuration(false)));
  }

  @Test
  void aQueueWithoutCapacityIsAnError() {
    Configuration c = new Configuration(false);
    c.set("yarn.scheduler.capacity.root.queues", "a");
    assertThrows(IllegalArgumentException.class, () -> SluiceRmConfig.queues(c));
  }

  @Test
  void gangFromTags() {
    assertTrue(SluiceRmConfig.gang(List.of("x", "sluice.gang"), false));
    assertTrue(SluiceRmConfig.gang(List.of("SLUICE.GANG=TRUE"), false));
    assertFalse(SluiceRmConfig.gang(List.of("sluice.gang=false"), true));
    assertTrue(SluiceRmConfig.gang(List.of("other"), true));
    assertFalse(SluiceRmConfig.gang(null, false));
  }
}
