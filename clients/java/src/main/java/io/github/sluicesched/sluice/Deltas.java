package io.github.sluicesched.sluice;

import java.util.Map;
import sluice.v1.Types.Delta;
import sluice.v1.Types.Job;
import sluice.v1.Types.Node;
import sluice.v1.Types.ObjectKind;
import sluice.v1.Types.ObjectRef;
import sluice.v1.Types.Queue;
import sluice.v1.Types.Task;

/** Builders of deltas: upserts (create or replace) and deletions. */
public final class Deltas {
  private Deltas() {}

  /** An upsert of a node offering allocatable (quantities: {"cpu": "8", "memory": "32Gi"}). */
  public static Delta node(String name, Map<String, String> allocatable) {
    return upsert(Node.newBuilder().setName(name).putAllAllocatable(allocatable).build());
  }

  /** An upsert of a queue with a weight. */
  public static Delta queue(String name, int weight) {
    return upsert(Queue.newBuilder().setName(name).setWeight(weight).build());
  }

  /** An upsert of a job: a gang of minAvailable tasks, in the default queue and namespace. */
  public static Delta job(String name, int minAvailable) {
    return upsert(Job.newBuilder().setName(name).setMinAvailable(minAvailable).build());
  }

  /** An upsert of a pending task of job asking for resources. */
  public static Delta task(String name, String job, Map<String, String> resources) {
    return upsert(Task.newBuilder().setName(name).setJob(job).putAllResources(resources).build());
  }

  /** An upsert of any node. */
  public static Delta upsert(Node n) {
    return Delta.newBuilder().setUpsertNode(n).build();
  }

  /** An upsert of any queue. */
  public static Delta upsert(Queue q) {
    return Delta.newBuilder().setUpsertQueue(q).build();
  }

  /** An upsert of any job. */
  public static Delta upsert(Job j) {
    return Delta.newBuilder().setUpsertJob(j).build();
  }

  /** An upsert of any task. */
  public static Delta upsert(Task t) {
    return Delta.newBuilder().setUpsertTask(t).build();
  }

  /** A deletion; namespace matters for jobs, tasks and disruption budgets ("" is "default"). */
  public static Delta delete(ObjectKind kind, String namespace, String name) {
    return Delta.newBuilder()
        .setDelete(ObjectRef.newBuilder().setKind(kind).setNamespace(namespace).setName(name))
        .build();
  }
}
