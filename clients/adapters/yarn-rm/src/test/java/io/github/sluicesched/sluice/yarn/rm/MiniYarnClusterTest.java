package io.github.sluicesched.sluice.yarn.rm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.applications.distributedshell.ApplicationMaster;
import org.apache.hadoop.yarn.applications.distributedshell.Client;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A real YARN whose scheduler is Sluice: a MiniYARNCluster (one ResourceManager loading
 * SluiceResourceScheduler by class name, three NodeManagers with 4 vcores each, launching real
 * container processes) and a real sluiced, running distributed-shell applications whose
 * containers run {@code sleep}. Every container (AMs included) takes one vcore, so the
 * cluster has 12 slots.
 *
 * <p>Queues (capacity-scheduler style): root.a 50%, root.b 10%, root.f 40%, each up to 100%.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MiniYarnClusterTest {
  private static final int SLOTS = 12;

  private SluicedProcess sluiced;
  private MiniYARNCluster cluster;
  private ResourceManager rm;
  private SluiceResourceScheduler scheduler;
  private Configuration clientConf;
  private final ExecutorService clients = Executors.newCachedThreadPool();
  private final Map<String, Future<Boolean>> runs = new ConcurrentHashMap<>();

  @BeforeAll
  void startCluster() throws Exception {
    String bin = SluicedProcess.binaryFromEnv();
    if (bin == null) {
      if ("1".equals(System.getenv("SLUICE_REQUIRE_SERVERS"))) {
        fail("SLUICED_BIN is not set: run-tests.sh builds sluiced and sets it");
      }
      Assumptions.abort("no sluiced binary (SLUICED_BIN); run run-tests.sh");
    }
    Path work = Path.of("target", "it").toAbsolutePath();
    sluiced = new SluicedProcess(bin, work);
    sluiced.start();

    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, SluiceResourceScheduler.class.getName());
    conf.set(SluiceRmConfig.ADDRESS, sluiced.address());
    conf.set(SluiceRmConfig.CLUSTER, "yarn-it-" + ProcessHandle.current().pid());
    conf.setLong(SluiceRmConfig.INTERVAL_MS, 200);
    conf.setLong(SluiceRmConfig.PREEMPTION_WAIT_MS, 0);
    conf.set("yarn.scheduler.capacity.root.queues", "a,b,f");
    conf.set("yarn.scheduler.capacity.root.a.capacity", "50");
    conf.set("yarn.scheduler.capacity.root.b.capacity", "10");
    conf.set("yarn.scheduler.capacity.root.f.capacity", "40");
    // Three NodeManagers share this host: YARN and Sluice tell them apart by host:port.
    conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 4096);
    conf.setInt(YarnConfiguration.NM_VCORES, 4);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 100f);
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 1);
    conf.setBoolean(YarnConfiguration.TIMELINE_SERVICE_ENABLED, false);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 500);

    cluster = new MiniYARNCluster("sluice-it", 3, 1, 1);
    cluster.init(conf);
    cluster.start();
    assertTrue(cluster.waitForNodeManagersToConnect(60_000), "NodeManagers did not register");
    rm = cluster.getResourceManager();
    scheduler = (SluiceResourceScheduler) rm.getResourceScheduler();
    clientConf = new Configuration(cluster.getConfig());

    // The AMs run in containers with this JVM's class path (yarn.is.minicluster) and read
    // yarn-site.xml from it: give them the cluster's addresses.
    URL site = getClass().getClassLoader().getResource("yarn-site.xml");
    try (OutputStream out = new FileOutputStream(new File(site.toURI()))) {
      cluster.getConfig().writeXml(out);
    }
    waitFor("Sluice knows the three nodes", 60, () -> scheduler.sluice().clusterResource().vcores() == SLOTS);
  }

  @AfterAll
  void stopCluster() throws Exception {
    clients.shutdownNow();
    if (cluster != null) {
      cluster.stop();
    }
    if (sluiced != null) {
      sluiced.close();
    }
  }

  /**
   * Gang placement and queue weights. A gang filler in root.f holds 8 of the 12 slots. GB
   * (root.b, submitted first) and GA (root.a) are gangs of an AM and 6 containers: with their
   * AMs running 2 slots are free, and neither gets any container while the filler runs
   * (Sluice's gang: all 6 or none). When the filler ends, both could go; root.a's weight (50
   * against 10) gives it the smaller share, so GA's 6 containers start first, together, and
   * GB's 6 together once GA is done, though GB asked first.
   */
  @Test
  @Order(1)
  void gangsStartWholeAndQueueWeightsDecideWhoGoesFirst() throws Exception {
    ApplicationId f = submit("filler", "f", 7, 40, true);
    waitFor("the filler's AM and 7 containers run", 120, () -> live(f) == 8);

    ApplicationId gb = submit("gang-b", "b", 6, 6, true);
    waitFor("GB's AM runs and asks for 6", 120, () -> scheduler.sluice().hasApplication(gb.toString())
        && scheduler.sluice().pendingContainers(gb.toString()) == 6);
    ApplicationId ga = submit("gang-a", "a", 6, 6, true);
    waitFor("GA's AM runs and asks for 6", 120, () -> scheduler.sluice().hasApplication(ga.toString())
        && scheduler.sluice().pendingContainers(ga.toString()) == 6);

    GangWatch watch = new GangWatch(List.of(ga, gb));
    watch.start();
    assertEquals(8, live(f), "the filler ended before both gangs were waiting; the machine is too slow");
    assertEquals(2, freeSlots(), "2 slots free while the filler runs");
    long until = System.currentTimeMillis() + 3_000;
    while (System.currentTimeMillis() < until) {
      assertEquals(1, live(ga), "GA got part of its gang (only its AM may run)");
      assertEquals(1, live(gb), "GB got part of its gang (only its AM may run)");
      Thread.sleep(100);
    }

    waitFor("GA's containers start", 120, () -> workerPlacements(ga).size() == 6);
    assertEquals(0, workerPlacements(gb).size(), "GB started before GA");
    waitFor("GB's containers start", 120, () -> workerPlacements(gb).size() == 6);
    assertTrue(result("gang-a"), "GA failed");
    assertTrue(result("gang-b"), "GB failed");
    assertTrue(result("filler"), "the filler failed");
    watch.stop();

    assertEquals(1, cyclesOf(workerPlacements(ga)), "GA's containers came in more than one cycle");
    assertEquals(1, cyclesOf(workerPlacements(gb)), "GB's containers came in more than one cycle");
    assertTrue(workerPlacements(ga).get(0).cycle() < workerPlacements(gb).get(0).cycle());
    assertTrue(gb.getId() < ga.getId(), "GB was submitted first");
    // What YARN itself held for each gang went from the AM alone to the AM and 6 at once.
    assertEquals(6, watch.firstWorkers(ga), "YARN held part of GA's gang");
    assertEquals(6, watch.firstWorkers(gb), "YARN held part of GB's gang");
    assertEquals(0, scheduler.refusedBinds());
  }

  /**
   * Reclaim through a sluiced restart. B1 (root.b, no gang) fills 11 slots. sluiced restarts
   * with nothing; the scheduler sends its whole state again. A1 (root.a) then needs 5 slots:
   * root.a is under its share, root.b far above, so Sluice evicts B1's containers, the RM kills
   * them as PREEMPTED (YARN's own preemption metrics count them) and A1's containers run. A
   * Sluice that had lost B1 would bind A1 onto full nodes, which the scheduler would refuse.
   */
  @Test
  @Order(2)
  void reclaimAcrossASluicedRestart() throws Exception {
    ApplicationId b1 = submit("busy-b", "b", 10, 120, false);
    waitFor("B1's AM and 10 containers run", 120, () -> live(b1) == 11);

    long recoveries = scheduler.sluice().recoveries();
    long cycles = scheduler.cycles();
    sluiced.stop();
    Thread.sleep(1_500); // cycles and heartbeats fail meanwhile
    sluiced.start();
    waitFor("the scheduler resends its state to the new sluiced", 60,
        () -> scheduler.sluice().recoveries() > recoveries && scheduler.cycles() > cycles + 2);
    assertTrue(scheduler.failedCycles() > 0, "no cycle failed while sluiced was down");

    ApplicationId a1 = submit("reclaim-a", "a", 5, 3, false);
    assertTrue(result("reclaim-a"), "A1 failed");
    RMApp b1App = rm.getRMContext().getRMApps().get(b1);
    int preempted = b1App.getRMAppMetrics().getNumNonAMContainersPreempted();
    assertTrue(preempted >= 5, "YARN counts " + preempted + " of B1's containers preempted, expected 5 or more");
    assertTrue(scheduler.preemptedKills() >= 5);
    // Placements beyond the 5 come from asks the AM re-sent before it heard of the first ones
    // (YARN's ask protocol); its AM releases them unused.
    List<SluiceResourceScheduler.Placement> placedForA1 = workerPlacements(a1);
    long released = placedForA1.stream().filter(p -> scheduler.releasedByApplication(p.container())).count();
    assertEquals(5, placedForA1.size() - released, "A1 got its 5 containers (" + placedForA1.size()
        + " placed, " + released + " released unused by its AM)");
    assertEquals(0, scheduler.refusedBinds(), "Sluice placed containers where YARN had no room");

    try (YarnClient yc = YarnClient.createYarnClient()) {
      yc.init(clientConf);
      yc.start();
      yc.killApplication(b1);
    }
    waitFor("B1 is gone", 60, () -> !scheduler.sluice().hasApplication(b1.toString()));
  }

  // ---- helpers ---------------------------------------------------------------------------

  /** Submits a distributed-shell application and returns its id once the RM has it. */
  private ApplicationId submit(String name, String queue, int containers, int sleepSeconds, boolean gang)
      throws Exception {
    String jar = new File(ApplicationMaster.class.getProtectionDomain().getCodeSource().getLocation().toURI())
        .getAbsolutePath();
    List<String> args = new ArrayList<>(List.of("--jar", jar, "--appname", name, "--queue", queue,
        "--num_containers", Integer.toString(containers), "--shell_command", "sleep " + sleepSeconds,
        "--master_memory", "256", "--master_vcores", "1", "--container_memory", "128", "--container_vcores", "1",
        "--timeout", "600000"));
    if (gang) {
      args.addAll(List.of("--application_tags", SluiceRmConfig.GANG_TAG));
    }
    Client client = new Client(new Configuration(clientConf));
    assertTrue(client.init(args.toArray(new String[0])));
    runs.put(name, clients.submit(client::run));
    ApplicationId[] id = new ApplicationId[1];
    waitFor("the RM has " + name, 60, () -> {
      for (RMApp app : rm.getRMContext().getRMApps().values()) {
        if (app.getName().equals(name)) {
          id[0] = app.getApplicationId();
          return true;
        }
      }
      return false;
    });
    return id[0];
  }

  private boolean result(String name) throws Exception {
    return runs.get(name).get(240, TimeUnit.SECONDS);
  }

  /** The application's live containers as the RM holds them (AM included). */
  private int live(ApplicationId id) {
    synchronized (scheduler) {
      SchedulerApplication<SluiceAppAttempt> app = scheduler.getSchedulerApplications().get(id);
      if (app == null || app.getCurrentAppAttempt() == null) {
        return 0;
      }
      return app.getCurrentAppAttempt().getLiveContainers().size();
    }
  }

  private int workers(ApplicationId id) {
    synchronized (scheduler) {
      SchedulerApplication<SluiceAppAttempt> app = scheduler.getSchedulerApplications().get(id);
      if (app == null || app.getCurrentAppAttempt() == null) {
        return 0;
      }
      int n = 0;
      for (RMContainer c : app.getCurrentAppAttempt().getLiveContainers()) {
        if (!c.isAMContainer()) {
          n++;
        }
      }
      return n;
    }
  }

  private int freeSlots() {
    synchronized (scheduler) {
      int free = 0;
      for (NodeId n : rm.getRMContext().getRMNodes().keySet()) {
        free += scheduler.getSchedulerNode(n).getUnallocatedResource().getVirtualCores();
      }
      return free;
    }
  }

  private List<SluiceResourceScheduler.Placement> workerPlacements(ApplicationId id) {
    return scheduler.placements().stream().filter(p -> p.application().equals(id) && !p.am()).toList();
  }

  private static long cyclesOf(List<SluiceResourceScheduler.Placement> ps) {
    return ps.stream().mapToLong(SluiceResourceScheduler.Placement::cycle).distinct().count();
  }

  private static void waitFor(String what, int seconds, BooleanSupplier cond) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      if (cond.getAsBoolean()) {
        return;
      }
      Thread.sleep(100);
    }
    fail("timed out after " + seconds + "s waiting for: " + what);
  }

  /** Samples, under the scheduler's lock, how many containers YARN first held for each gang. */
  private final class GangWatch {
    private final List<ApplicationId> apps;
    private final Map<ApplicationId, Integer> first = new ConcurrentHashMap<>();
    private volatile boolean running = true;
    private Thread thread;

    GangWatch(List<ApplicationId> apps) {
      this.apps = apps;
    }

    void start() {
      thread = new Thread(() -> {
        while (running) {
          for (ApplicationId a : apps) {
            int n = workers(a);
            if (n > 0) {
              first.putIfAbsent(a, n);
            }
          }
          try {
            Thread.sleep(20);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "gang-watch");
      thread.setDaemon(true);
      thread.start();
    }

    void stop() throws InterruptedException {
      running = false;
      thread.join();
    }

    int firstWorkers(ApplicationId a) {
      assertFalse(!first.containsKey(a), "never saw containers of " + a);
      return first.get(a);
    }
  }
}
