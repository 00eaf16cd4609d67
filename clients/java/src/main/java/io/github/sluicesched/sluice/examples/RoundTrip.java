package io.github.sluicesched.sluice.examples;

import io.github.sluicesched.sluice.Deltas;
import io.github.sluicesched.sluice.SluiceClient;
import java.util.List;
import java.util.Map;
import sluice.v1.Scheduler.CommitPlanResponse;
import sluice.v1.Scheduler.JobOutcome;
import sluice.v1.Scheduler.Plan;
import sluice.v1.Scheduler.ScheduleMode;

/**
 * Round trip against a running sluiced: stream a node and a gang job of two tasks, schedule,
 * commit, and check that both tasks were bound to the node. Exits 0 when the plan is as
 * expected, 1 otherwise.
 *
 * <pre>
 * java -cp 'target/sluice-client-0.1.0.jar:target/lib/*' \
 *   io.github.sluicesched.sluice.examples.RoundTrip --server 127.0.0.1:50051
 * </pre>
 */
public final class RoundTrip {
  private RoundTrip() {}

  public static void main(String[] args) throws Exception {
    String server = "127.0.0.1:50051";
    String cluster = "roundtrip-java";
    String token = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--server" -> server = args[++i];
        case "--cluster" -> cluster = args[++i];
        case "--token" -> token = args[++i];
        default -> {
          System.err.println("usage: RoundTrip [--server HOST:PORT] [--cluster NAME] [--token TOKEN]");
          System.exit(2);
        }
      }
    }
    int code;
    try {
      code = run(server, cluster, token);
    } catch (Exception e) {
      System.err.println("FAIL: " + e);
      code = 1;
    }
    System.exit(code);
  }

  static int run(String server, String cluster, String token) throws Exception {
    Map<String, String> want = Map.of("default/rt-0", "n1", "default/rt-1", "n1");
    SluiceClient.Builder b = SluiceClient.builder(server).cluster(cluster).plaintext();
    if (token != null) {
      b.bearerToken(token);
    }
    try (SluiceClient c = b.build()) {
      long rev = c.apply(List.of(
          Deltas.node("n1", Map.of("cpu", "8", "memory", "32Gi", "pods", "110")),
          Deltas.job("rt", 2),
          Deltas.task("rt-0", "rt", Map.of("cpu", "2", "memory", "1Gi")),
          Deltas.task("rt-1", "rt", Map.of("cpu", "2", "memory", "1Gi"))), true);
      System.out.println("applied the cluster at revision " + rev);

      Plan plan = c.schedule(ScheduleMode.SCHEDULE_MODE_PROPOSE);
      System.out.printf("plan %s at revision %d: %d decisions%n",
          plan.getId(), plan.getBaseRevision(), plan.getDecisionsCount());
      Map<String, String> proposed = SluiceClient.binds(plan.getDecisionsList());
      if (!proposed.equals(want)) {
        System.err.println("FAIL: proposed binds " + proposed + ", want " + want);
        c.discard(plan);
        return 1;
      }

      CommitPlanResponse resp = c.commit(plan);
      Map<String, String> applied = SluiceClient.binds(resp.getAppliedList());
      System.out.println("committed at revision " + resp.getRevision() + ": " + applied);
      if (!applied.equals(want) || resp.getRejectedCount() > 0) {
        System.err.println("FAIL: applied binds " + applied + " (" + resp.getRejectedCount()
            + " rejected), want " + want);
        return 1;
      }

      JobOutcome outcome = c.explain("rt").getOutcome();
      System.out.printf("job %s: %d ready of %d%n", SluiceClient.fullName(outcome.getJob()), outcome.getReady(), outcome.getMinAvailable());
      if (outcome.getReady() != 2) {
        System.err.println("FAIL: job ready " + outcome.getReady() + ", want 2");
        return 1;
      }
    }
    System.out.println("PASS java round trip");
    return 0;
  }
}
