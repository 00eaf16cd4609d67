package io.github.sluicesched.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import sluice.v1.Errors.ErrorReason;
import sluice.v1.Scheduler.CommitPlanResponse;
import sluice.v1.Scheduler.Decision;
import sluice.v1.Scheduler.DecisionOutcome;
import sluice.v1.Scheduler.JobOutcome;
import sluice.v1.Scheduler.Plan;
import sluice.v1.Scheduler.PlanState;
import sluice.v1.Scheduler.ScheduleMode;
import sluice.v1.Scheduler.ScheduleRequest;
import sluice.v1.Scheduler.ScheduleResponse;
import sluice.v1.Types.Delta;
import sluice.v1.Types.ObjectKind;

/**
 * The client against a real sluiced: the one the system property sluice.server or the
 * environment variable SLUICE_SERVER names ("127.0.0.1:PORT", plaintext, no credentials).
 * Without one the tests are skipped, unless SLUICE_REQUIRE_SERVERS=1 (scripts/clients.sh sets
 * it), when they fail.
 */
class SluiceClientTest {
  /** Single-task jobs of the large plan: more decisions than two pages of 1000 hold. */
  private static final int N = 2500;

  private SluiceClient c;

  private static String server() {
    String a = System.getProperty("sluice.server");
    if (a == null || a.isEmpty()) {
      a = System.getenv("SLUICE_SERVER");
    }
    if (a == null || a.isEmpty()) {
      if ("1".equals(System.getenv("SLUICE_REQUIRE_SERVERS"))) {
        fail("SLUICE_REQUIRE_SERVERS=1 but neither -Dsluice.server nor SLUICE_SERVER names a sluiced");
      }
      assumeTrue(false, "no sluiced: set SLUICE_SERVER=HOST:PORT (scripts/clients.sh java starts one)");
    }
    return a;
  }

  @BeforeEach
  void setUp(TestInfo info) throws Exception {
    String name = info.getTestMethod().orElseThrow().getName().toLowerCase(Locale.ROOT);
    c = SluiceClient.builder(server()).cluster("java-" + name + "-" + ProcessHandle.current().pid())
        .plaintext().timeoutMillis(120_000).build();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (c != null) {
      c.close();
    }
  }

  private static String bindTask(Decision d) {
    return d.getBind().getTask();
  }

  @Test
  void roundTrip() {
    c.apply(List.of(Deltas.node("n1", Map.of("cpu", "4")), Deltas.job("j", 2),
        Deltas.task("j-0", "j", Map.of("cpu", "1")), Deltas.task("j-1", "j", Map.of("cpu", "1"))), true);
    CommitPlanResponse resp = c.commit(c.schedule(ScheduleMode.SCHEDULE_MODE_PROPOSE));
    assertEquals(Map.of("default/j-0", "n1", "default/j-1", "n1"), SluiceClient.binds(resp.getAppliedList()));
    assertEquals(0, resp.getRejectedCount());
    assertEquals(PlanState.PLAN_STATE_COMMITTED, resp.getPlan().getState());
  }

  @Test
  void commitOfADiscardedPlanFailsWithPlanDiscarded() {
    c.apply(List.of(Deltas.node("n1", Map.of("cpu", "4")), Deltas.job("d", 1),
        Deltas.task("d-0", "d", Map.of("cpu", "1"))), true);
    Plan plan = c.schedule(ScheduleMode.SCHEDULE_MODE_PROPOSE);
    c.discard(plan);
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.commit(plan));
    assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
    assertEquals(ErrorReason.ERROR_REASON_PLAN_DISCARDED, SluiceErrors.reason(e));
    assertEquals(SluiceErrors.DOMAIN, SluiceErrors.errorInfo(e).orElseThrow().getDomain());
    // The discarded plan is only its summary now.
    assertEquals(PlanState.PLAN_STATE_DISCARDED, c.getPlan(plan).getState());
  }

  @Test
  void errorReasons() {
    c.apply(List.of(Deltas.node("n1", Map.of("cpu", "1"))), true);
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.getPlan("no-such-plan"));
    assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    assertEquals(ErrorReason.ERROR_REASON_PLAN_NOT_FOUND, SluiceErrors.reason(e));
    e = assertThrows(StatusRuntimeException.class,
        () -> c.apply(List.of(Deltas.node("bad", Map.of("cpu", "lots"))), false));
    assertEquals(ErrorReason.ERROR_REASON_INVALID_FIELD, SluiceErrors.reason(e));
    assertEquals(ErrorReason.ERROR_REASON_UNSPECIFIED, SluiceErrors.reason(new IllegalStateException("not RPC")));
    assertEquals(ErrorReason.ERROR_REASON_UNSPECIFIED,
        SluiceErrors.reason(Status.INTERNAL.withDescription("no details").asRuntimeException()));
  }

  /** 2,500 single-task jobs on one node big enough for all. */
  private void bigCluster() {
    List<Delta> deltas = new ArrayList<>();
    deltas.add(Deltas.node("n1", Map.of("cpu", "10000", "memory", "10000Gi", "pods", "10000")));
    for (int i = 0; i < N; i++) {
      String name = String.format("j%04d", i);
      deltas.add(Deltas.job(name, 1));
      deltas.add(Deltas.task(name + "-0", name, Map.of("cpu", "1", "memory", "1Gi")));
    }
    c.apply(deltas, true);
  }

  private static void assertWhole(Plan plan) {
    assertEquals(N, plan.getDecisionsCount());
    assertEquals(N, plan.getJobsCount());
    assertEquals(N, plan.getCounts().getBinds());
    Set<String> tasks = plan.getDecisionsList().stream().map(SluiceClientTest::bindTask).collect(Collectors.toSet());
    assertEquals(N, tasks.size());
    assertEquals(IntStream.range(0, N).mapToObj(i -> String.format("default/j%04d", i)).toList(),
        plan.getJobsList().stream().map(JobOutcome::getJob).toList());
  }

  @Test
  void largePlansArriveWhole() {
    bigCluster();
    ScheduleResponse first = c.scheduler().schedule(ScheduleRequest.newBuilder().setCluster(c.cluster())
        .setMode(ScheduleMode.SCHEDULE_MODE_DRY_RUN).build());
    assertEquals(1000, first.getPlan().getDecisionsCount(), "the server's first page");
    assertNotEquals("", first.getNextPageToken());

    Plan dry = c.schedule(ScheduleMode.SCHEDULE_MODE_DRY_RUN);
    assertWhole(dry);
    assertEquals(PlanState.PLAN_STATE_DRY_RUN, dry.getState());
    Plan again = c.getPlan(dry);
    assertWhole(again);
    assertEquals(dry.getDecisionsList(), again.getDecisionsList());
  }

  @Test
  void commitCoversTheWholePlan() {
    bigCluster();
    Plan plan = c.schedule(ScheduleMode.SCHEDULE_MODE_PROPOSE);
    assertWhole(plan);
    // A change to a task whose bind is on the last page: the commit rejects that decision, and
    // only the committed record (not the first page's lists) can say so.
    String victim = bindTask(plan.getDecisions(N - 1));
    c.apply(List.of(Deltas.delete(ObjectKind.OBJECT_KIND_TASK, "", victim.split("/", 2)[1])), false);
    CommitPlanResponse resp = c.commit(plan);
    assertEquals(N - 1, resp.getAppliedCount());
    assertEquals(List.of(victim),
        resp.getRejectedList().stream().map(r -> bindTask(r.getDecision())).toList());
    assertFalse(resp.getRejected(0).getReason().isEmpty());
    assertEquals("", resp.getNextPageToken());
    assertEquals(N, resp.getPlan().getDecisionsCount());
    assertEquals(PlanState.PLAN_STATE_COMMITTED, resp.getPlan().getState());
    assertEquals(N - 1, resp.getPlan().getCounts().getApplied());
    assertEquals(1, resp.getPlan().getCounts().getRejected());
    assertFalse(SluiceClient.binds(resp.getAppliedList()).containsKey(victim));

    Plan record = c.getPlan(plan.getId());
    assertEquals(N, record.getDecisionsCount());
    SluiceClient.Outcomes o = SluiceClient.outcomes(record);
    assertEquals(N - 1, o.applied().size());
    assertTrue(o.applied().stream().allMatch(d -> d.getOutcome() == DecisionOutcome.DECISION_OUTCOME_APPLIED));
    assertEquals(1, o.rejected().size());

    // Committing again answers the same, whole.
    CommitPlanResponse again = c.commit(plan);
    assertEquals(resp.getRevision(), again.getRevision());
    assertEquals(N - 1, again.getAppliedCount());
    assertEquals(1, again.getRejectedCount());
    Set<String> bound = new HashSet<>(SluiceClient.binds(again.getAppliedList()).keySet());
    assertEquals(N - 1, bound.size());
  }
}
