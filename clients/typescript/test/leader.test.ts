// Tests of leader following (node:test). The decision logic runs against fake members; the
// rest needs a replicated sluiced: SLUICE_REPLICAS (its members' gRPC addresses,
// comma-separated) and SLUICE_REPLICA_FOLLOWER (one that followed when they started), which
// scripts/clients.sh exports.

import assert from "node:assert/strict";
import net from "node:net";
import { describe, test } from "node:test";

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { ErrorInfoSchema } from "../src/errors.js";
import { LeaderTransport, type Member } from "../src/leader.js";
import {
  ClusterStateService,
  ERROR_DOMAIN,
  MAX_LEADER_HOPS,
  ReadConsistency,
  SchedulerService,
  SluiceClient,
  errorInfo,
  leaderOf,
  node,
} from "../src/index.js";
import { failure } from "./helpers.js";

const REPLICAS = process.env.SLUICE_REPLICAS?.split(",").filter((a) => a !== "") ?? [];
const FOLLOWER = process.env.SLUICE_REPLICA_FOLLOWER ?? "";
if (process.env.SLUICE_REQUIRE_SERVERS && (REPLICAS.length === 0 || FOLLOWER === "")) {
  // scripts/clients.sh sets this: there, a test skipped for want of a server is a failure.
  throw new Error("SLUICE_REQUIRE_SERVERS is set but SLUICE_REPLICAS or SLUICE_REPLICA_FOLLOWER is not");
}
const noReplicas = REPLICAS.length > 0 && FOLLOWER !== "" ? false : "SLUICE_REPLICAS is not set";

/** An UNAVAILABLE error as a member sends it, with a Sluice ErrorInfo. */
function refusal(reason: string, metadata: Record<string, string> = {}, code = Code.Unavailable): ConnectError {
  return new ConnectError(reason, code, undefined, [
    { desc: ErrorInfoSchema, value: { reason, domain: ERROR_DOMAIN, metadata } as never },
  ]);
}

/** The error of an unreachable member: UNAVAILABLE without a Sluice ErrorInfo. */
function unreachable(): ConnectError {
  return new ConnectError("connect ECONNREFUSED", Code.Unavailable);
}

/**
 * Fake members: answer(url) decides each call (throw to fail it); calls lists the URL of
 * every call made, dialed and closed the members opened and closed.
 */
class Fakes {
  calls: string[] = [];
  dialed: string[] = [];
  closed: string[] = [];
  constructor(public answer: (url: string) => Promise<void> | void = () => {}) {}

  dial = (url: string): Member => {
    this.dialed.push(url);
    const transport: Transport = {
      unary: async (method) => {
        this.calls.push(url);
        await this.answer(url);
        const res = { stream: false, service: method.parent, method, header: new Headers(), trailer: new Headers() };
        return { ...res, message: create(method.output) } as never;
      },
      stream: async (method) => {
        this.calls.push(url);
        await this.answer(url);
        // One message, then the error a follower ends a stream with.
        async function* messages() {
          yield create(method.output);
          throw refusal("NOT_LEADER", { leader: "b:2" });
        }
        const res = { stream: true, service: method.parent, method, header: new Headers(), trailer: new Headers() };
        return { ...res, message: messages() } as never;
      },
    };
    return { transport, close: () => this.closed.push(url) };
  };
}

/** A unary call through t (ApplyDeltas, from the raw client as SluiceClient makes it). */
function apply(t: Transport): Promise<unknown> {
  return createClient(ClusterStateService, t).applyDeltas({ cluster: "c" });
}

describe("leader following (fake members)", () => {
  test("members: the target then the endpoints, deduplicated, with the target's scheme", () => {
    const f = new Fakes();
    const t = new LeaderTransport(f.dial, ["a:1", "https://b:2", "a:1", "c:3", "https://b:2"], "https");
    assert.deepEqual(t.members, ["https://a:1", "https://b:2", "https://c:3"]);
    assert.equal(t.current, "https://a:1");
    assert.deepEqual(f.dialed, ["https://a:1"], "only the target is opened at first");
  });

  test("leaderOf", () => {
    assert.equal(leaderOf(refusal("NOT_LEADER", { leader: "h:1" })), "h:1");
    assert.equal(leaderOf(refusal("NOT_LEADER")), undefined);
    assert.equal(leaderOf(refusal("NOT_LEADER", { leader: "h:1" }, Code.Internal)), undefined);
    assert.equal(leaderOf(refusal("STORE_UNAVAILABLE")), undefined);
    assert.equal(leaderOf(new Error("no")), undefined);
  });

  test("NOT_LEADER naming a leader: the call is sent again there, and later calls go there", async () => {
    const f = new Fakes((url) => {
      if (url !== "http://leader:9") throw refusal("NOT_LEADER", { leader: "leader:9" });
    });
    const t = new LeaderTransport(f.dial, ["a:1", "b:2"], "http");
    await apply(t);
    assert.deepEqual(f.calls, ["http://a:1", "http://leader:9"]);
    assert.equal(t.current, "http://leader:9", "a leader not among the endpoints is followed too");
    await apply(t);
    assert.deepEqual(f.calls, ["http://a:1", "http://leader:9", "http://leader:9"]);
    assert.deepEqual(f.dialed, ["http://a:1", "http://leader:9"]);
  });

  test("NOT_LEADER without a leader is thrown unchanged, not retried, and moves nothing", async () => {
    const refused = refusal("NOT_LEADER");
    const f = new Fakes(() => {
      throw refused;
    });
    const t = new LeaderTransport(f.dial, ["a:1", "b:2"], "http");
    const err = await failure(apply(t));
    assert.equal(err, refused);
    assert.deepEqual(f.calls, ["http://a:1"]);
    assert.equal(t.current, "http://a:1");
  });

  test(`a call follows at most ${MAX_LEADER_HOPS} hops`, async () => {
    // a and b each name the other.
    const f = new Fakes((url) => {
      throw refusal("NOT_LEADER", { leader: url === "http://a:1" ? "b:2" : "a:1" });
    });
    const t = new LeaderTransport(f.dial, ["a:1"], "http");
    const err = await failure(apply(t));
    assert.equal(errorInfo(err)?.reason, "NOT_LEADER");
    assert.equal(f.calls.length, 1 + MAX_LEADER_HOPS);
    assert.deepEqual(f.dialed, ["http://a:1", "http://b:2"], "a member is opened once");
  });

  const cases: [string, () => Error, boolean][] = [
    ["unreachable (UNAVAILABLE, no ErrorInfo)", unreachable, true],
    ["STORE_UNAVAILABLE", () => refusal("STORE_UNAVAILABLE"), true],
    ["STALE_READ_REFUSED", () => refusal("STALE_READ_REFUSED"), true],
    ["another UNAVAILABLE reason", () => refusal("SHUTTING_DOWN"), false],
    ["INTERNAL without ErrorInfo", () => new ConnectError("boom", Code.Internal), false],
    ["DEADLINE_EXCEEDED", () => new ConnectError("late", Code.DeadlineExceeded), false],
    ["not a ConnectError", () => new Error("odd"), false],
  ];
  for (const [name, make, rotates] of cases) {
    test(`${name}: thrown, not retried; ${rotates ? "later calls go to the next member" : "no move"}`, async () => {
      const failed = make();
      const f = new Fakes(() => {
        throw failed;
      });
      const t = new LeaderTransport(f.dial, ["a:1", "b:2", "c:3"], "http");
      assert.equal(await failure(t.unary(ClusterStateService.method.applyDeltas, undefined, undefined, undefined, {})), failed);
      assert.deepEqual(f.calls, ["http://a:1"]);
      assert.equal(t.current, rotates ? "http://b:2" : "http://a:1");
    });
  }

  test("rotation is round robin, and needs two members", async () => {
    const f = new Fakes(() => {
      throw unreachable();
    });
    const t = new LeaderTransport(f.dial, ["a:1", "b:2", "c:3"], "http");
    for (let i = 0; i < 3; i++) await failure(apply(t));
    assert.deepEqual(f.calls, ["http://a:1", "http://b:2", "http://c:3"]);
    assert.equal(t.current, "http://a:1", "after the last, the first");

    const alone = new Fakes(() => {
      throw unreachable();
    });
    const one = new LeaderTransport(alone.dial, ["a:1", "a:1"], "http");
    await failure(apply(one));
    assert.equal(one.current, "http://a:1");
    assert.deepEqual(alone.dialed, ["http://a:1"]);
  });

  test("a leader not listed rotates to the first member", async () => {
    let leaderDown = false;
    const f = new Fakes((url) => {
      if (url === "http://a:1") throw refusal("NOT_LEADER", { leader: "l:9" });
      if (url === "http://l:9" && leaderDown) throw unreachable();
    });
    const t = new LeaderTransport(f.dial, ["a:1", "b:2"], "http");
    await apply(t);
    assert.equal(t.current, "http://l:9");
    leaderDown = true;
    await failure(apply(t));
    assert.equal(t.current, "http://a:1");
  });

  test("concurrent calls: a call that failed on a member another call left follows it", async () => {
    // Both calls reach a; then a fails them both as unreachable.
    let fail!: () => void;
    const down = new Promise<void>((resolve) => (fail = resolve));
    const f = new Fakes(async (url) => {
      if (url === "http://a:1") {
        await down;
        throw unreachable();
      }
      if (url === "http://b:2") throw refusal("NOT_LEADER", { leader: "c:3" });
    });
    const t = new LeaderTransport(f.dial, ["a:1", "b:2", "c:3"], "http");
    const first = failure(apply(t));
    const second = failure(apply(t));
    await new Promise((r) => setImmediate(r));
    fail();
    await first;
    await second;
    assert.equal(t.current, "http://b:2", "one move, not two");

    // A NOT_LEADER answer from a member another call left: sent again where that call went.
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    let n = 0;
    const g = new Fakes(async (url) => {
      if (url !== "http://a:1") return;
      const mine = n++;
      await slow;
      throw mine === 0 ? unreachable() : refusal("NOT_LEADER", { leader: "c:3" });
    });
    const u = new LeaderTransport(g.dial, ["a:1", "b:2", "c:3"], "http");
    const lost = failure(apply(u));
    const followed = apply(u);
    await new Promise((r) => setImmediate(r));
    release();
    await lost;
    await followed;
    assert.deepEqual(g.calls, ["http://a:1", "http://a:1", "http://b:2"]);
    assert.equal(u.current, "http://b:2");
  });

  test("a stream ended by NOT_LEADER: the caller gets the error, later calls go to the leader", async () => {
    const f = new Fakes();
    const t = new LeaderTransport(f.dial, ["a:1"], "http");
    const got: unknown[] = [];
    const err = await failure(
      (async () => {
        for await (const resp of createClient(SchedulerService, t).watchPlans({ cluster: "c" })) got.push(resp);
      })(),
    );
    assert.equal(got.length, 1);
    assert.equal(leaderOf(err), "b:2");
    assert.deepEqual(f.calls, ["http://a:1"], "a stream is not opened again");
    assert.equal(t.current, "http://b:2");
    await apply(t);
    assert.deepEqual(f.calls, ["http://a:1", "http://b:2"]);
  });

  test("close closes every member opened, and stops following", async () => {
    const f = new Fakes((url) => {
      throw refusal("NOT_LEADER", { leader: url === "http://a:1" ? "b:2" : "c:3" });
    });
    const t = new LeaderTransport(f.dial, ["a:1"], "http");
    await failure(apply(t));
    t.close();
    assert.deepEqual(f.closed.sort(), f.dialed.sort());
    assert.ok(f.closed.length >= 2);
    const before = f.calls.length;
    await failure(apply(t));
    assert.equal(f.calls.length, before + 1, "no hop after close");
  });
});

describe("replicated server", { skip: noReplicas }, () => {
  const cluster = `ts-replicas-${process.pid}-${Date.now()}`;
  const url = (addr: string) => `http://${addr}`;

  test("a write sent to a follower goes to the leader (wrapper and raw client)", async () => {
    // Without following, the follower refuses the write and names the leader.
    const plain = createClient(ClusterStateService, createGrpcTransport({ baseUrl: url(FOLLOWER) }));
    const refused = await failure(plain.applyDeltas({ cluster, batch: { deltas: [node("refused", { cpu: "1" })] } }));
    assert.equal(ConnectError.from(refused).code, Code.Unavailable);
    const leader = leaderOf(refused);
    assert.ok(leader !== undefined && REPLICAS.includes(leader), `NOT_LEADER names a member: ${String(refused)}`);

    const c = new SluiceClient(FOLLOWER, { cluster, timeoutMs: 60_000 });
    try {
      assert.ok((await c.apply([node("via-wrapper", { cpu: "2" })])) > 0n);
      assert.equal(c.member, url(leader));
      assert.deepEqual((await c.nodes()).map((n) => n.name), ["via-wrapper"]);
    } finally {
      c.close();
    }

    const raw = new SluiceClient(FOLLOWER, { cluster, timeoutMs: 60_000 });
    try {
      const resp = await raw.state.applyDeltas({ cluster, batch: { deltas: [node("via-raw", { cpu: "2" })] } });
      assert.ok(resp.revision > 0n);
      assert.equal(raw.member, url(leader));
      assert.deepEqual((await raw.nodes()).map((n) => n.name).sort(), ["via-raw", "via-wrapper"]);
    } finally {
      raw.close();
    }
  });

  test("a follower's stale read with the revision of a write as minRevision sees the write", async () => {
    // The client sets minRevision itself (test/ryw.test.ts); here the server honours it.
    const ryw = `${cluster}-ryw`;
    const c = new SluiceClient(FOLLOWER, { cluster: ryw, timeoutMs: 60_000 });
    let rev: bigint;
    try {
      rev = await c.apply([node("written", { cpu: "1" })]);
      assert.ok(rev > 0n);
      assert.notEqual(c.member, url(FOLLOWER), "the write went to the leader");
      // The client's own stale read carries its floor, and the member it uses answers it.
      const own = await c.state.listNodes({ cluster: ryw, read: { consistency: ReadConsistency.STALE } });
      assert.deepEqual(own.nodes.map((n) => n.name), ["written"]);
      assert.ok(own.revision >= rev);
    } finally {
      c.close();
    }

    const plain = createClient(ClusterStateService, createGrpcTransport({ baseUrl: url(FOLLOWER) }));
    const resp = await plain.listNodes(
      { cluster: ryw, read: { consistency: ReadConsistency.STALE, minRevision: rev } },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(resp.nodes.map((n) => n.name), ["written"]);
    assert.ok(resp.revision >= rev, `answered at ${resp.revision}, below ${rev}`);
  });

  test("an unreachable target: the call fails, later calls try the endpoints", async () => {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.on("error", reject);
      srv.listen(0, "127.0.0.1", () => {
        const addr = srv.address();
        srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
      });
    });
    assert.ok(port > 0);
    const c = new SluiceClient(`127.0.0.1:${port}`, { cluster: `${cluster}-dead`, endpoints: REPLICAS, timeoutMs: 60_000 });
    try {
      assert.equal(c.members.length, 1 + REPLICAS.length);
      const err = await failure(c.apply([node("n1", { cpu: "1" })]));
      assert.ok(err instanceof ConnectError, String(err));
      assert.equal(err.code, Code.Unavailable);
      assert.equal(errorInfo(err), undefined);
      assert.equal(c.member, url(REPLICAS[0]));

      let applied = false;
      const errors: unknown[] = [];
      for (let i = 0; i < c.members.length && !applied; i++) {
        try {
          await c.apply([node("n1", { cpu: "1" })]);
          applied = true;
        } catch (e) {
          errors.push(e);
        }
      }
      assert.ok(applied, `no apply succeeded: ${errors.map(String).join("; ")}`);
      assert.deepEqual((await c.nodes()).map((n) => n.name), ["n1"]);
    } finally {
      c.close();
    }
  });
});
