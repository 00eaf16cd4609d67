// Round trip against a running sluiced: stream a node and a gang job of two tasks,
// schedule, commit, and check that both tasks were bound to the node.
//
//   npm run build && node dist/examples/roundtrip.js --server 127.0.0.1:50051
//
// Exits 0 when the plan is as expected, 1 otherwise.

import { parseArgs } from "node:util";

import { SluiceClient, binds, fullName, job, node, task } from "../src/index.js";

function same(a: Record<string, string>, b: Record<string, string>): boolean {
  return JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      server: { type: "string", default: "127.0.0.1:50051" },
      cluster: { type: "string", default: "roundtrip-typescript" },
      token: { type: "string" },
    },
  });
  const want = { "default/rt-0": "n1", "default/rt-1": "n1" };
  const c = new SluiceClient(values.server!, { cluster: values.cluster, token: values.token });
  try {
    const rev = await c.apply(
      [
        node("n1", { cpu: "8", memory: "32Gi", pods: "110" }),
        job("rt", { minAvailable: 2 }),
        task("rt-0", "rt", { cpu: "2", memory: "1Gi" }),
        task("rt-1", "rt", { cpu: "2", memory: "1Gi" }),
      ],
      { replaceAll: true },
    );
    console.log(`applied the cluster at revision ${rev}`);

    const plan = await c.schedule();
    console.log(`plan ${plan.id} at revision ${plan.baseRevision}: ${plan.decisions.length} decisions`);
    const proposed = binds(plan.decisions);
    if (!same(proposed, want)) {
      console.error(`FAIL: proposed binds ${JSON.stringify(proposed)}, want ${JSON.stringify(want)}`);
      await c.discard(plan);
      return 1;
    }

    const resp = await c.commit(plan);
    const applied = binds(resp.applied);
    console.log(`committed at revision ${resp.revision}: ${JSON.stringify(applied)}`);
    if (!same(applied, want) || resp.rejected.length > 0) {
      console.error(`FAIL: applied binds ${JSON.stringify(applied)} (${resp.rejected.length} rejected), want ${JSON.stringify(want)}`);
      return 1;
    }

    const outcome = (await c.explain("rt")).outcome;
    console.log(`job ${fullName(outcome?.job)}: ${outcome?.ready} ready of ${outcome?.minAvailable}`);
    if (outcome?.ready !== 2) {
      console.error(`FAIL: job ready ${outcome?.ready}, want 2`);
      return 1;
    }
  } finally {
    c.close();
  }
  console.log("PASS typescript round trip");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`FAIL: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    process.exit(1);
  },
);
