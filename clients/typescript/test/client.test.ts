// Tests of the TypeScript client (node:test). The builders need nothing; the rest needs a
// sluiced whose gRPC address is in SLUICE_SERVER (scripts/clients.sh starts one).
//
//   npm run build && SLUICE_SERVER=HOST:PORT npm test

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError } from "@connectrpc/connect";

import {
  DecisionOutcome,
  ErrorReason,
  ObjectKind,
  PlanState,
  ScheduleMode,
  SluiceClient,
  TaintEffect,
  TolerationOperator,
  binds,
  errorInfo,
  errorReason,
  fullName,
  job,
  node,
  outcomes,
  remove,
  task,
  type Delta,
  type Plan,
} from "../src/index.js";
import { failure } from "./helpers.js";

const SERVER = process.env.SLUICE_SERVER;
if (process.env.SLUICE_REQUIRE_SERVERS && !SERVER) {
  // scripts/clients.sh sets this: there, a test skipped for want of a server is a failure.
  throw new Error("SLUICE_REQUIRE_SERVERS is set but SLUICE_SERVER is not");
}
const noServer = SERVER ? false : "SLUICE_SERVER is not set";

/** A client on a cluster of the test's own. */
function client(cluster: string): SluiceClient {
  return new SluiceClient(SERVER!, { cluster: `ts-${cluster}-${process.pid}`, timeoutMs: 120_000 });
}

describe("builders", () => {
  test("node, job, task and remove", () => {
    const n = node("n1", { cpu: "8" }, { labels: { zone: "a" } });
    assert.equal(n.change.case, "upsertNode");
    const t = task("t", "j", { cpu: "1" });
    assert.equal(t.change.case === "upsertTask" && t.change.value.job, "j");
    assert.equal(remove(ObjectKind.TASK, "t", "ns").change.case, "delete");
  });

  test("fullName", () => {
    assert.equal(fullName({ namespace: "team", name: "etl/a" }), "team/etl/a");
    assert.equal(fullName({ namespace: "", name: "j" }), "default/j");
    assert.equal(fullName({ namespace: "ns", name: "" }), "");
    assert.equal(fullName(undefined), "");
  });

  test("errorReason of what is not a Sluice error", () => {
    assert.equal(errorReason(new Error("no")), ErrorReason.UNSPECIFIED);
    assert.equal(errorReason(new ConnectError("no details", Code.Internal)), ErrorReason.UNSPECIFIED);
    assert.equal(errorInfo("a string"), undefined);
  });
});

describe("server", { skip: noServer }, () => {
  test("round trip", async () => {
    const c = client("round-trip");
    try {
      await c.apply(
        [node("n1", { cpu: "4" }), job("j", { minAvailable: 2 }), task("j-0", "j", { cpu: "1" }), task("j-1", "j", { cpu: "1" })],
        { replaceAll: true },
      );
      const plan = await c.schedule();
      const resp = await c.commit(plan);
      assert.deepEqual(binds(resp.applied), { "default/j-0": "n1", "default/j-1": "n1" });
      assert.equal(resp.rejected.length, 0);
      assert.equal(resp.plan?.state, PlanState.COMMITTED);
    } finally {
      c.close();
    }
  });

  test("decisions name tasks and jobs by reference; closed sets are enums", async () => {
    const c = client("refs");
    try {
      // n1 is tainted; only the task that tolerates the taint may go there.
      await c.apply(
        [
          node("n1", { cpu: "4" }, { taints: [{ key: "dedicated", value: "gpu", effect: TaintEffect.NO_SCHEDULE }] }),
          job("gpu", { namespace: "team" }),
          // The operator is left unspecified: it means EQUAL.
          task("gpu-0", "gpu", { cpu: "1" }, { namespace: "team", tolerations: [{ key: "dedicated", value: "gpu" }] }),
          job("plain"),
          task("plain-0", "plain", { cpu: "1" }),
        ],
        { replaceAll: true },
      );
      const dry = await c.schedule("dry_run");
      assert.equal(dry.decisions.length, 1);
      const d = dry.decisions[0].kind;
      assert.equal(d.case, "bind");
      if (d.case === "bind") {
        assert.deepEqual([d.value.task?.namespace, d.value.task?.name], ["team", "gpu-0"]);
        assert.deepEqual([d.value.job?.namespace, d.value.job?.name], ["team", "gpu"]);
      }
      assert.deepEqual(dry.jobs.map((o) => fullName(o.job)).sort(), ["default/plain", "team/gpu"]);
      assert.equal(fullName((await c.explain("plain")).outcome?.job), "default/plain");

      assert.equal((await c.nodes())[0].taints[0].effect, TaintEffect.NO_SCHEDULE);
      const tol = (await c.tasks({ job: "gpu", namespace: "team" }))[0].tolerations[0];
      assert.deepEqual([tol.operator, tol.effect], [TolerationOperator.EQUAL, TaintEffect.UNSPECIFIED]);

      // A taint must say its effect.
      const err = ConnectError.from(await failure(c.apply([node("n2", { cpu: "1" }, { taints: [{ key: "k" }] })])));
      assert.equal(err.code, Code.InvalidArgument);
      assert.match(err.rawMessage, /taints\[0\]\.effect/);
    } finally {
      c.close();
    }
  });

  test("committing a discarded plan fails with PLAN_DISCARDED", async () => {
    const c = client("discarded");
    try {
      await c.apply([node("n1", { cpu: "4" }), job("d"), task("d-0", "d", { cpu: "1" })], { replaceAll: true });
      const plan = await c.schedule();
      await c.discard(plan);
      const err = await failure(c.commit(plan));
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.FailedPrecondition);
      assert.equal(errorReason(err), ErrorReason.PLAN_DISCARDED);
      assert.deepEqual(errorInfo(err), { reason: "PLAN_DISCARDED", domain: "sluice.sched", metadata: {} });
      // The discarded plan is only its summary now.
      assert.equal((await c.getPlan(plan.id)).state, PlanState.DISCARDED);
    } finally {
      c.close();
    }
  });

  test("an unknown plan fails with PLAN_NOT_FOUND", async () => {
    const c = client("not-found");
    try {
      await c.apply([node("n1", { cpu: "1" })], { replaceAll: true });
      const err = await failure(c.getPlan("no-such-plan"));
      assert.equal(ConnectError.from(err).code, Code.NotFound);
      assert.equal(errorReason(err), ErrorReason.PLAN_NOT_FOUND);
      assert.equal(errorReason(await failure(c.apply([node("bad", { cpu: "lots" })]))), ErrorReason.INVALID_FIELD);
    } finally {
      c.close();
    }
  });
});

// A plan of more decisions than one page holds (the server sends 1000 at a time): 2,500
// single-task jobs on one big node.
describe("large plans", { skip: noServer }, () => {
  const N = 2500;
  const jobNames = Array.from({ length: N }, (_, i) => `j${String(i).padStart(4, "0")}`);
  let c: SluiceClient;

  before(async () => {
    c = client("large");
  });
  after(() => c?.close());

  async function bigCluster(): Promise<void> {
    const deltas: Delta[] = [node("n1", { cpu: "10000", memory: "10000Gi", pods: "10000" })];
    for (const name of jobNames) {
      deltas.push(job(name, { minAvailable: 1 }), task(`${name}-0`, name, { cpu: "1", memory: "1Gi" }));
    }
    await c.apply(deltas, { replaceAll: true });
  }

  function assertWhole(plan: Plan): void {
    assert.equal(plan.decisions.length, N);
    assert.equal(plan.jobs.length, N);
    assert.equal(plan.counts?.binds, N);
    assert.equal(new Set(plan.decisions.map((d) => (d.kind.case === "bind" ? fullName(d.kind.value.task) : ""))).size, N);
    assert.deepEqual(plan.jobs.map((o) => fullName(o.job)), jobNames.map((n) => `default/${n}`));
  }

  test("schedule and getPlan read every page", async () => {
    await bigCluster();
    const first = await c.scheduler.schedule({ cluster: c.cluster, mode: ScheduleMode.DRY_RUN });
    assert.equal(first.plan?.decisions.length, 1000, "the server's first page");
    assert.notEqual(first.nextPageToken, "");
    const dry = await c.schedule("dry_run");
    assertWhole(dry);
    assert.equal(dry.state, PlanState.DRY_RUN);
    const again = await c.getPlan(dry);
    assertWhole(again);
    assert.deepEqual(binds(again.decisions), binds(dry.decisions));
  });

  test("commit covers the whole plan", async () => {
    await bigCluster();
    const plan = await c.schedule();
    assertWhole(plan);
    // A change to a task whose bind is on the last page: the commit rejects that decision,
    // and only the committed record (not the first page's lists) can say so.
    const last = plan.decisions[N - 1].kind;
    assert.equal(last.case, "bind");
    const ref = last.case === "bind" ? last.value.task : undefined;
    const victim = fullName(ref);
    await c.apply([remove(ObjectKind.TASK, ref?.name ?? "", ref?.namespace)]);
    const resp = await c.commit(plan);
    assert.equal(resp.applied.length, N - 1);
    assert.deepEqual(resp.rejected.map((r) => r.decision?.kind.case === "bind" && fullName(r.decision.kind.value.task)), [victim]);
    assert.ok(resp.rejected[0].reason);
    assert.equal(resp.nextPageToken, "");
    assert.equal(resp.plan?.decisions.length, N);
    assert.equal(resp.plan?.state, PlanState.COMMITTED);
    assert.equal(resp.plan?.counts?.applied, N - 1);
    assert.equal(resp.plan?.counts?.rejected, 1);
    assert.ok(!(victim in binds(resp.applied)));

    const record = await c.getPlan(plan.id);
    assert.equal(record.decisions.length, N);
    const { applied, rejected } = outcomes(record);
    assert.equal(applied.length, N - 1);
    assert.ok(applied.every((d) => d.outcome === DecisionOutcome.APPLIED));
    assert.equal(rejected.length, 1);

    // Committing again answers the same, whole.
    const again = await c.commit(plan);
    assert.equal(again.revision, resp.revision);
    assert.equal(again.applied.length, N - 1);
    assert.equal(again.rejected.length, 1);
    assert.equal((await c.tasks()).filter((t) => t.node === "n1").length, N - 1);
  });
});
