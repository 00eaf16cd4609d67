package io.github.sluicesched.sluice.yarn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import sluice.v1.Types.Affinity;
import sluice.v1.Types.Node;
import sluice.v1.Types.NodeSelectorRequirement;
import sluice.v1.Types.NodeSelectorTerm;
import sluice.v1.Types.PreferredSchedulingTerm;
import sluice.v1.Types.Queue;

/**
 * The pure part of the mapping between YARN's model and Sluice's: resources, nodes, queues and
 * locality. {@link SluiceYarnScheduler} keeps the state and talks to the server.
 */
public final class YarnMapping {
  /** The node label naming a node's host; locality on hosts selects on it. */
  public static final String HOSTNAME_LABEL = "kubernetes.io/hostname";
  /** Default node label naming a node's rack. */
  public static final String DEFAULT_RACK_LABEL = "topology.kubernetes.io/rack";
  /** Default Sluice resource name of YARN's yarn.io/gpu. */
  public static final String DEFAULT_GPU_RESOURCE = "nvidia.com/gpu";
  /** Preference weight of a host named in an ask (node-local). */
  public static final int NODE_LOCAL_WEIGHT = 100;
  /** Preference weight of a rack named in an ask (rack-local). */
  public static final int RACK_LOCAL_WEIGHT = 50;

  private final String rackLabel;
  private final String gpuResource;

  public YarnMapping(String rackLabel, String gpuResource) {
    this.rackLabel = rackLabel;
    this.gpuResource = gpuResource;
  }

  public YarnMapping() {
    this(DEFAULT_RACK_LABEL, DEFAULT_GPU_RESOURCE);
  }

  public String rackLabel() {
    return rackLabel;
  }

  public String gpuResource() {
    return gpuResource;
  }

  /** A YARN resource as Sluice quantities: vcores as "cpu", MB as "memory" in Mi, GPUs. */
  public Map<String, String> resources(Resource r) {
    Map<String, String> m = new TreeMap<>();
    m.put("cpu", Integer.toString(r.vcores()));
    m.put("memory", r.memoryMb() + "Mi");
    if (r.gpus() > 0) {
      m.put(gpuResource, Integer.toString(r.gpus()));
    }
    return m;
  }

  /**
   * A fraction of the cluster's resources as Sluice quantities (cpu in millicores, memory in
   * Mi, GPUs in milli-units, the last only when the cluster has GPUs).
   */
  public Map<String, String> share(Resource cluster, double fraction) {
    Map<String, String> m = new TreeMap<>();
    m.put("cpu", Math.round(cluster.vcores() * 1000.0 * fraction) + "m");
    m.put("memory", Math.round(cluster.memoryMb() * fraction) + "Mi");
    if (cluster.gpus() > 0) {
      m.put(gpuResource, Math.round(cluster.gpus() * 1000.0 * fraction) + "m");
    }
    return m;
  }

  /**
   * A NodeManager as a Sluice node named after its host: capacity as allocatable, the host and
   * rack as labels, unschedulable unless RUNNING, utilisation (when known) as usage.
   */
  public Node node(NodeId id, String rack, Resource capability, NodeState state, double cpuUtil, double memUtil) {
    Node.Builder b = Node.newBuilder()
        .setName(id.host())
        .putAllAllocatable(resources(capability))
        .putLabels(HOSTNAME_LABEL, id.host())
        .putLabels("yarn.io/nodemanager-port", Integer.toString(id.port()))
        .setUnschedulable(!state.schedulable());
    if (rack != null && !rack.isEmpty()) {
      b.putLabels(rackLabel, rack);
    }
    if (cpuUtil >= 0) {
      b.putUsage("cpu", Math.min(100, cpuUtil));
    }
    if (memUtil >= 0) {
      b.putUsage("memory", Math.min(100, memUtil));
    }
    return b.build();
  }

  /**
   * The queues of a CapacityScheduler hierarchy as Sluice queues, parents before children.
   * "root" itself is Sluice's implicit root and is not returned. Each queue is named by its
   * full path and hangs under its parent path; its weight is its capacity in percent (at least
   * 1), its deserved amount its absolute capacity (the product of the capacities on its path)
   * of the cluster, its capability its absolute maximum capacity of the cluster (left unset at
   * 100%). Fails when a queue's parent is missing.
   */
  public List<Queue> queues(Collection<QueueConfig> configs, Resource cluster) {
    Map<String, QueueConfig> byPath = new TreeMap<>();
    for (QueueConfig q : configs) {
      if (byPath.put(q.path(), q) != null) {
        throw new IllegalArgumentException("queue " + q.path() + " is given twice");
      }
    }
    List<QueueConfig> ordered = new ArrayList<>(byPath.values());
    ordered.sort((a, b) -> Integer.compare(depth(a.path()), depth(b.path())) != 0
        ? Integer.compare(depth(a.path()), depth(b.path())) : a.path().compareTo(b.path()));
    Map<String, double[]> abs = new HashMap<>(); // path -> {absolute capacity, absolute maximum}
    abs.put("root", new double[] {1, 1});
    List<Queue> out = new ArrayList<>();
    boolean empty = cluster.vcores() == 0 && cluster.memoryMb() == 0 && cluster.gpus() == 0;
    for (QueueConfig q : ordered) {
      if (q.path().equals("root")) {
        continue;
      }
      double[] p = abs.get(q.parent());
      if (p == null) {
        throw new IllegalArgumentException("queue " + q.path() + ": parent " + q.parent() + " is not configured");
      }
      double absCap = p[0] * q.capacity() / 100.0;
      double absMax = p[1] * q.maximumCapacity() / 100.0;
      abs.put(q.path(), new double[] {absCap, absMax});
      Queue.Builder b = Queue.newBuilder()
          .setName(q.path())
          .setParent(q.parent())
          .setWeight(Math.max(1, (int) Math.round(q.capacity())))
          .setPriority(q.priority())
          .setState(switch (q.state()) {
            case RUNNING -> sluice.v1.Types.QueueState.QUEUE_STATE_OPEN;
            case DRAINING -> sluice.v1.Types.QueueState.QUEUE_STATE_CLOSING;
            case STOPPED -> sluice.v1.Types.QueueState.QUEUE_STATE_CLOSED;
          })
          .putAnnotations("yarn.io/capacity", fmt(q.capacity()))
          .putAnnotations("yarn.io/maximum-capacity", fmt(q.maximumCapacity()));
      if (!empty) {
        b.putAllDeserved(share(cluster, absCap));
        if (absMax < 1.0 - 1e-9) {
          b.putAllCapability(share(cluster, absMax));
        }
      }
      out.add(b.build());
    }
    return out;
  }

  private static int depth(String path) {
    return path.split("\\.").length;
  }

  private static String fmt(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }

  /** Where the containers of one scheduler key may or should go. */
  public record Locality(Map<String, String> nodeSelector, Affinity affinity) {
    public static final Locality ANYWHERE = new Locality(Map.of(), null);
  }

  /**
   * The locality of one scheduler key's rows (host, rack and ANY rows; rows asking for no
   * container are ignored).
   *
   * <ul>
   *   <li>ANY with relaxLocality (the default): the named hosts (weight 100) and racks whose
   *       row relaxes locality (weight 50) are preferred node affinity terms.
   *   <li>ANY without relaxLocality: the containers must go to a named host or a named rack
   *       whose row relaxes locality (a rack row without it only scopes its hosts). One host or
   *       one rack is a node selector on the host or rack label; more are required node
   *       affinity terms (OR), with the hosts also preferred.
   * </ul>
   *
   * Fails when ANY does not relax locality and no host or rack is left to stay on.
   */
  public Locality locality(Collection<ResourceRequest> rows) {
    boolean anyRelax = true;
    Set<String> hosts = new LinkedHashSet<>();
    Set<String> racks = new LinkedHashSet<>();
    for (ResourceRequest r : rows) {
      if (r.isAny()) {
        anyRelax = r.relaxLocality();
      } else if (r.numContainers() > 0) {
        if (r.isRack()) {
          if (r.relaxLocality()) {
            racks.add(r.resourceName());
          }
        } else {
          hosts.add(r.resourceName());
        }
      }
    }
    if (anyRelax) {
      if (hosts.isEmpty() && racks.isEmpty()) {
        return Locality.ANYWHERE;
      }
      Affinity.Builder a = Affinity.newBuilder();
      if (!hosts.isEmpty()) {
        a.addNodePreferred(preferred(NODE_LOCAL_WEIGHT, HOSTNAME_LABEL, hosts));
      }
      if (!racks.isEmpty()) {
        a.addNodePreferred(preferred(RACK_LOCAL_WEIGHT, rackLabel, racks));
      }
      return new Locality(Map.of(), a.build());
    }
    if (hosts.isEmpty() && racks.isEmpty()) {
      throw new IllegalArgumentException(
          "relaxLocality is false on " + ResourceRequest.ANY + " but no host or rack row asks for containers");
    }
    if (racks.isEmpty() && hosts.size() == 1) {
      return new Locality(Map.of(HOSTNAME_LABEL, hosts.iterator().next()), null);
    }
    if (hosts.isEmpty() && racks.size() == 1) {
      return new Locality(Map.of(rackLabel, racks.iterator().next()), null);
    }
    Affinity.Builder a = Affinity.newBuilder();
    if (!hosts.isEmpty()) {
      a.addNodeRequired(NodeSelectorTerm.newBuilder().addMatchExpressions(in(HOSTNAME_LABEL, hosts)));
      a.addNodePreferred(preferred(NODE_LOCAL_WEIGHT, HOSTNAME_LABEL, hosts));
    }
    if (!racks.isEmpty()) {
      a.addNodeRequired(NodeSelectorTerm.newBuilder().addMatchExpressions(in(rackLabel, racks)));
    }
    return new Locality(Map.of(), a.build());
  }

  private static NodeSelectorRequirement in(String key, Collection<String> values) {
    return NodeSelectorRequirement.newBuilder().setKey(key).setOperator("In").addAllValues(values).build();
  }

  private static PreferredSchedulingTerm preferred(int weight, String key, Collection<String> values) {
    return PreferredSchedulingTerm.newBuilder().setWeight(weight).addMatchExpressions(in(key, values)).build();
  }

  /**
   * A YARN request priority as a Sluice task priority. YARN serves smaller numbers first within
   * an application; Sluice orders tasks by higher priority first: the sign flips.
   */
  public static int taskPriority(int yarnPriority) {
    return -yarnPriority;
  }

  /** Labels every task of an application carries. */
  public static Map<String, String> taskLabels(String applicationId) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("yarn.io/application-id", applicationId);
    return m;
  }
}
