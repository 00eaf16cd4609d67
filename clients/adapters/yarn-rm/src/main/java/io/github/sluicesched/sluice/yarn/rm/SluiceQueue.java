package io.github.sluicesched.sluice.yarn.rm;

import io.github.sluicesched.sluice.yarn.QueueConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.factories.RecordFactory;
import org.apache.hadoop.yarn.factory.providers.RecordFactoryProvider;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;

/**
 * A queue of the RM's view ("root", "root.a", ...): its metrics, its active users and the
 * QueueInfo clients read. Sluice enforces the capacities; this only reports them. Every user
 * may submit (no queue ACLs).
 */
final class SluiceQueue implements Queue {
  private static final RecordFactory RECORDS = RecordFactoryProvider.getRecordFactory(null);

  private final String path;
  private final QueueMetrics metrics;
  private final ActiveUsersManager users;
  private final Supplier<Resource> used;
  private final Supplier<Resource> cluster;
  private volatile QueueConfig config;
  private final List<SluiceQueue> children = new ArrayList<>();

  SluiceQueue(String path, SluiceQueue parent, QueueConfig config, Configuration conf, Supplier<Resource> used,
      Supplier<Resource> cluster) {
    this.path = path;
    this.config = config;
    this.metrics = QueueMetrics.forQueue(path, parent, false, conf);
    this.users = new ActiveUsersManager(metrics);
    this.used = used;
    this.cluster = cluster;
    if (parent != null) {
      parent.children.add(this);
    }
  }

  String path() {
    return path;
  }

  QueueConfig config() {
    return config;
  }

  void setConfig(QueueConfig c) {
    this.config = c;
  }

  boolean leaf() {
    return children.isEmpty();
  }

  @Override
  public String getQueueName() {
    return path;
  }

  @Override
  public QueueMetrics getMetrics() {
    return metrics;
  }

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    QueueInfo info = RECORDS.newRecordInstance(QueueInfo.class);
    info.setQueueName(path);
    info.setQueuePath(path);
    QueueConfig c = config;
    info.setCapacity(c == null ? 1f : (float) (c.capacity() / 100));
    info.setMaximumCapacity(c == null ? 1f : (float) (c.maximumCapacity() / 100));
    Resource total = cluster.get();
    info.setCurrentCapacity(total.getMemorySize() == 0 ? 0f
        : (float) used.get().getMemorySize() / total.getMemorySize());
    info.setQueueState(c == null || c.state() == io.github.sluicesched.sluice.yarn.QueueState.RUNNING
        ? QueueState.RUNNING : QueueState.STOPPED);
    List<QueueInfo> kids = new ArrayList<>();
    if (includeChildQueues) {
      for (SluiceQueue q : children) {
        kids.add(q.getQueueInfo(recursive, recursive));
      }
    }
    info.setChildQueues(kids);
    return info;
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    QueueUserACLInfo acl = RECORDS.newRecordInstance(QueueUserACLInfo.class);
    acl.setQueueName(path);
    acl.setUserAcls(Arrays.asList(QueueACL.values()));
    return List.of(acl);
  }

  @Override
  public boolean hasAccess(QueueACL acl, UserGroupInformation user) {
    return true;
  }

  @Override
  public ActiveUsersManager getAbstractUsersManager() {
    return users;
  }

  @Override
  public void recoverContainer(Resource clusterResource, SchedulerApplicationAttempt attempt, RMContainer rmc) {
    // Work-preserving RM recovery is not supported: nothing to restore here.
  }

  @Override
  public Set<String> getAccessibleNodeLabels() {
    return null;
  }

  @Override
  public String getDefaultNodeLabelExpression() {
    return null;
  }

  @Override
  public void incPendingResource(String nodeLabel, Resource resourceToInc) {
  }

  @Override
  public void decPendingResource(String nodeLabel, Resource resourceToDec) {
  }

  @Override
  public Priority getDefaultApplicationPriority() {
    return null;
  }

  @Override
  public void incReservedResource(String partition, Resource reservedRes) {
  }

  @Override
  public void decReservedResource(String partition, Resource reservedRes) {
  }
}
