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
import sluice.v1.ClusterState.GetTaskRequest;
import sluice.v1.Errors.ErrorReason;
import sluice.v1.Scheduler.CommitPlanResponse;
import sluice.v1.Scheduler.Decision;
import sluice.v1.Scheduler.DecisionOutcome;
import sluice.v1.Scheduler.Plan;
import sluice.v1.Scheduler.PlanState;
import sluice.v1.Scheduler.ScheduleMode;
import sluice.v1.Scheduler.ScheduleRequest;
import sluice.v1.Scheduler.ScheduleResponse;
import sluice.v1.Types.Delta;
import sluice.v1.Types.Job;
import sluice.v1.Types.JobRef;
import sluice.v1.Types.Node;
import sluice.v1.Types.ObjectKind;
import sluice.v1.Types.Taint;
import sluice.v1.Types.TaintEffect;
import sluice.v1.Types.Task;
import sluice.v1.Types.TaskRef;
import sluice.v1.Types.Toleration;
import sluice.v1.Types.TolerationOperator;

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
    return SluiceClient.fullName(d.getBind().getTask());
  }

  @Test
  void fullNames() {
    assertEquals("team/etl/a", SluiceClient.fullName(TaskRef.newBuilder().setNamespace("team").setName("etl/a").build()));
    assertEquals("default/j", SluiceClient.fullName(JobRef.newBuilder().setName("j").build()));
    assertEquals("", SluiceClient.fullName(TaskRef.getDefaultInstance()));
  }

  /** Decisions name tasks and jobs by reference; closed sets are enums. */
  @Test
  void referencesAndClosedSets() {
    // n1 is tainted; only the task that tolerates the taint may go there. The toleration's
    // operator is left unspecified: it means EQUAL.
    Node tainted = Node.newBuilder().setName("n1").putAllocatable("cpu", "4")
        .addTaints(Taint.newBuilder().setKey("dedicated").setValue("gpu").setEffect(TaintEffect.TAINT_EFFECT_NO_SCHEDULE))
        .build();
    Task tolerant = Task.newBuilder().setName("gpu-0").setNamespace("team").setJob("gpu").putResources("cpu", "1")
        .addTolerations(Toleration.newBuilder().setKey("dedicated").setValue("gpu")).build();
    c.apply(List.of(Deltas.upsert(tainted),
        Deltas.upsert(Job.newBuilder().setName("gpu").setNamespace("team").setMinAvailable(1).build()),
        Deltas.upsert(tolerant), Deltas.job("plain", 1), Deltas.task("plain-0", "plain", Map.of("cpu", "1"))), true);

    Plan dry = c.schedule(ScheduleMode.SCHEDULE_MODE_DRY_RUN);
    assertEquals(1, dry.getDecisionsCount());
    assertEquals(TaskRef.newBuilder().setNamespace("team").setName("gpu-0").build(), dry.getDecisions(0).getBind().getTask());
    assertEquals(JobRef.newBuilder().setNamespace("team").setName("gpu").build(), dry.getDecisions(0).getBind().getJob());
    assertEquals(Set.of("team/gpu", "default/plain"),
        dry.getJobsList().stream().map(o -> SluiceClient.fullName(o.getJob())).collect(Collectors.toSet()));
    assertEquals("default/plain", SluiceClient.fullName(c.explain("plain").getOutcome().getJob()));

    assertEquals(TaintEffect.TAINT_EFFECT_NO_SCHEDULE, c.nodes().get(0).getTaints(0).getEffect());
    Toleration tol = c.state().getTask(GetTaskRequest.newBuilder().setCluster(c.cluster()).setNamespace("team")
        .setName("gpu-0").build()).getTask().getTolerations(0);
    assertEquals(TolerationOperator.TOLERATION_OPERATOR_EQUAL, tol.getOperator());
    assertEquals(TaintEffect.TAINT_EFFECT_UNSPECIFIED, tol.getEffect());

    // A taint must say its effect.
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> c.apply(List.of(Deltas.upsert(
        Node.newBuilder().setName("n2").putAllocatable("cpu", "1").addTaints(Taint.newBuilder().setKey("k")).build())), false));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("taints[0].effect"), e.getStatus().getDescription());
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
        plan.getJobsList().stream().map(o -> SluiceClient.fullName(o.getJob())).toList());
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
    TaskRef ref = plan.getDecisions(N - 1).getBind().getTask();
    String victim = SluiceClient.fullName(ref);
    c.apply(List.of(Deltas.delete(ObjectKind.OBJECT_KIND_TASK, ref.getNamespace(), ref.getName())), false);
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
