package io.github.sluicesched.sluice.yarn.rm;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * An application attempt as the RM's bookkeeping sees it (asks, live and newly allocated
 * containers, usage), with one way in for a container: {@link #allocate}, called when a bind
 * decision of Sluice is carried out.
 */
public class SluiceAppAttempt extends FiCaSchedulerApp {
  public SluiceAppAttempt(ApplicationAttemptId attemptId, String user, Queue queue, AbstractUsersManager users,
      RMContext rmContext, Priority priority, boolean recovering) {
    super(attemptId, user, queue, users, rmContext, priority, recovering);
  }

  /**
   * Records a container Sluice placed for one of the attempt's outstanding asks: an
   * RMContainer, queued for the attempt's next allocate call, its ask used up (on the
   * node, rack or anywhere, as type says) and started. Null when the attempt stopped or no
   * longer asks for such a container.
   */
  public RMContainer allocate(NodeType type, FiCaSchedulerNode node, SchedulerRequestKey key, Container container) {
    writeLock.lock();
    try {
      if (isStopped || getOutstandingAsksCount(key) <= 0) {
        return null;
      }
      RMContainerImpl rmc = new RMContainerImpl(container, key, getApplicationAttemptId(), node.getNodeID(),
          appSchedulingInfo.getUser(), rmContext, node.getPartition());
      rmc.setQueueName(getQueueName());
      updateAMContainerDiagnostics(AMState.ASSIGNED, null);
      addToNewlyAllocatedContainers(node, rmc);
      liveContainers.put(container.getId(), rmc);
      ContainerRequest used = appSchedulingInfo.allocate(type, node, key, rmc);
      attemptResourceUsage.incUsed(node.getPartition(), container.getResource());
      rmc.setContainerRequest(used);
      rmc.handle(new RMContainerEvent(container.getId(), RMContainerEventType.START));
      return rmc;
    } finally {
      writeLock.unlock();
    }
  }
}
