package io.github.sluicesched.sluice.yarn.rm;

import io.github.sluicesched.sluice.yarn.QueueConfig;
import io.github.sluicesched.sluice.yarn.QueueState;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;

/**
 * The scheduler's yarn-site.xml properties and the queue hierarchy it reads from
 * CapacityScheduler-style properties ({@code yarn.scheduler.capacity.<path>.*}, in
 * yarn-site.xml or a capacity-scheduler.xml on the RM's class path).
 */
public final class SluiceRmConfig {
  private SluiceRmConfig() {}

  public static final String PREFIX = "yarn.scheduler.sluice.";
  /** host:port of sluiced's gRPC API. Required. */
  public static final String ADDRESS = PREFIX + "address";
  /** Sluice cluster this RM's state goes to. Default "yarn". */
  public static final String CLUSTER = PREFIX + "cluster";
  public static final String DEFAULT_CLUSTER = "yarn";
  /** Namespace of the jobs and tasks. Default "yarn". */
  public static final String NAMESPACE = PREFIX + "namespace";
  /** PEM file of the CA that signed sluiced's certificate; unset means plaintext. */
  public static final String TLS_CA = PREFIX + "tls.ca";
  /** Bearer token for sluiced (with TLS). */
  public static final String TOKEN = PREFIX + "token";
  /** Deadline of one call to sluiced. Default 10000 ms. */
  public static final String TIMEOUT_MS = PREFIX + "timeout-ms";
  /** How often the scheduling thread runs a cycle (it also runs when asks arrive). Default 200 ms. */
  public static final String INTERVAL_MS = PREFIX + "schedule-interval-ms";
  /** How long a preempted container may run before the RM kills it. Default 15000 ms. */
  public static final String PREEMPTION_WAIT_MS = PREFIX + "preemption.max-wait-before-kill-ms";
  /** Whether applications are gangs unless their tags say otherwise. Default false. */
  public static final String GANG_DEFAULT = PREFIX + "gang.default";
  /** Volcano scheduler configuration (YAML) to install; default the adapter's. */
  public static final String SCHEDULER_CONF = PREFIX + "scheduler-conf";
  /** Application tag that makes an application a gang ("sluice.gang" or "sluice.gang=true"). */
  public static final String GANG_TAG = "sluice.gang";

  static final String CS = "yarn.scheduler.capacity.";

  /**
   * The queues below root, parents before children, from
   * {@code yarn.scheduler.capacity.<path>.queues}, {@code .capacity},
   * {@code .maximum-capacity}, {@code .state} and {@code .priority}. Without
   * {@code yarn.scheduler.capacity.root.queues}: one queue, root.default, with all of the
   * cluster.
   */
  public static List<QueueConfig> queues(Configuration conf) {
    List<QueueConfig> out = new ArrayList<>();
    if (conf.getTrimmedStrings(CS + "root.queues").length == 0) {
      out.add(QueueConfig.of("root.default", 100, 100));
      return out;
    }
    addChildren(conf, "root", out);
    return out;
  }

  private static void addChildren(Configuration conf, String parent, List<QueueConfig> out) {
    for (String name : conf.getTrimmedStrings(CS + parent + ".queues")) {
      String path = parent + "." + name;
      String p = CS + path + ".";
      String cap = conf.getTrimmed(p + "capacity");
      if (cap == null) {
        throw new IllegalArgumentException(p + "capacity is not set");
      }
      double capacity = Double.parseDouble(cap);
      double max = Double.parseDouble(conf.getTrimmed(p + "maximum-capacity", "100"));
      if (max < 0) { // CapacityScheduler's -1: no limit
        max = 100;
      }
      QueueState state = QueueState.valueOf(conf.getTrimmed(p + "state", "RUNNING").toUpperCase(Locale.ROOT));
      int priority = conf.getInt(p + "priority", 0);
      out.add(new QueueConfig(path, capacity, max, state, priority));
      addChildren(conf, path, out);
    }
  }

  /**
   * Whether the application is a gang: a tag "sluice.gang" or "sluice.gang=true" says yes,
   * "sluice.gang=false" says no, otherwise the default. YARN lower-cases tags.
   */
  public static boolean gang(Iterable<String> tags, boolean byDefault) {
    if (tags != null) {
      for (String t : tags) {
        String s = t.trim().toLowerCase(Locale.ROOT);
        if (s.equals(GANG_TAG) || s.equals(GANG_TAG + "=true")) {
          return true;
        }
        if (s.equals(GANG_TAG + "=false")) {
          return false;
        }
      }
    }
    return byDefault;
  }
}
