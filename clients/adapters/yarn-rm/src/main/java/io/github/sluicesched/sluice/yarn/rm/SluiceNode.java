package io.github.sluicesched.sluice.yarn.rm;

import java.util.function.BiConsumer;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/**
 * A node of the RM's accounting that says when a container's resources are really free
 * again: at once for a container that never started, but for a running one only once its
 * NodeManager reports it finished (YARN keeps a killed container's room until then). Sluice
 * hears of the end of a container at that moment, so that it never places a container on
 * room the RM still counts as taken.
 */
class SluiceNode extends FiCaSchedulerNode {
  private final BiConsumer<SluiceNode, ContainerId> released;

  SluiceNode(RMNode node, boolean usePortForNodeName, BiConsumer<SluiceNode, ContainerId> released) {
    super(node, usePortForNodeName);
    this.released = released;
  }

  @Override
  public synchronized void releaseContainer(ContainerId id, boolean releasedByNode) {
    boolean had = getContainer(id) != null;
    super.releaseContainer(id, releasedByNode);
    if (had && getContainer(id) == null) {
      released.accept(this, id);
    }
  }
}
