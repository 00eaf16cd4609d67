// Tests of the read-your-writes revision floor (node:test) against a fake member. The
// replicated server's side of it (minRevision honoured by a follower) is in leader.test.ts.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { clone, create, type DescMessage } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";

import { LeaderTransport, type Member } from "../src/leader.js";
import {
  ClusterStateService,
  ListNodesRequestSchema,
  ReadConsistency,
  SchedulerService,
  ScheduleMode,
  node,
  type ListNodesRequest,
  type WatchPlansRequest,
} from "../src/index.js";

/**
 * A fake member: every request it gets is kept in requests; a response carries revision
 * (when its message has that field).
 */
class Fake {
  requests: unknown[] = [];
  revision = 0n;

  dial = (): Member => {
    const answer = (output: DescMessage) =>
      output.field.revision ? create(output, { revision: this.revision } as never) : create(output);
    const transport: Transport = {
      unary: async (method, _signal, _timeout, _header, input) => {
        this.requests.push(input);
        const res = { stream: false, service: method.parent, method, header: new Headers(), trailer: new Headers() };
        return { ...res, message: answer(method.output) } as never;
      },
      stream: async (method, _signal, _timeout, _header, input) => {
        for await (const m of input) this.requests.push(m);
        async function* messages() {
          yield answer(method.output);
        }
        const res = { stream: true, service: method.parent, method, header: new Headers(), trailer: new Headers() };
        return { ...res, message: messages() } as never;
      },
    };
    return { transport, close: () => {} };
  };

  /** The read options of the last request. */
  lastRead() {
    return (this.requests.at(-1) as ListNodesRequest).read;
  }
}

describe("revision floor (fake member)", () => {
  const stale = { consistency: ReadConsistency.STALE };

  /** A transport on a fake member, whose cluster "c" saw a write at revision 7. */
  async function afterWrite(): Promise<{ f: Fake; t: LeaderTransport; state: ReturnType<typeof stateOf> }> {
    const f = new Fake();
    const t = new LeaderTransport(f.dial, ["a:1"], "http");
    const state = stateOf(t);
    f.revision = 7n;
    await state.applyDeltas({ cluster: "c", batch: { deltas: [node("n", { cpu: "1" })] } });
    f.revision = 0n;
    return { f, t, state };
  }
  const stateOf = (t: Transport) => createClient(ClusterStateService, t);

  test("a stale read carries the revision of the client's write as minRevision", async () => {
    const { f, state } = await afterWrite();
    await state.listNodes({ cluster: "c", read: stale });
    assert.equal(f.lastRead()?.consistency, ReadConsistency.STALE);
    assert.equal(f.lastRead()?.minRevision, 7n);
  });

  test("no floor before any revision was seen", async () => {
    const f = new Fake();
    const state = stateOf(new LeaderTransport(f.dial, ["a:1"], "http"));
    await state.listNodes({ cluster: "c", read: stale });
    assert.equal(f.lastRead()?.minRevision, 0n);
  });

  test("a minRevision of the caller's own is kept", async () => {
    const { f, state } = await afterWrite();
    await state.listNodes({ cluster: "c", read: { ...stale, minRevision: 3n } });
    assert.equal(f.lastRead()?.minRevision, 3n);
  });

  test("linearizable, unspecified and absent read options are untouched", async () => {
    const { f, state } = await afterWrite();
    for (const read of [{ consistency: ReadConsistency.LINEARIZABLE }, {}, undefined]) {
      await state.listNodes({ cluster: "c", read });
      assert.equal(f.lastRead()?.minRevision ?? 0n, 0n, JSON.stringify(read));
    }
    assert.equal(f.lastRead(), undefined, "no read options are added");
  });

  test("another cluster gets no floor", async () => {
    const { f, state } = await afterWrite();
    await state.listNodes({ cluster: "other", read: stale });
    assert.equal(f.lastRead()?.minRevision, 0n);
  });

  test("the caller's request is not changed (a message or an init object)", async () => {
    const { f, state } = await afterWrite();
    const msg = create(ListNodesRequestSchema, { cluster: "c", read: stale });
    const before = clone(ListNodesRequestSchema, msg);
    await state.listNodes(msg);
    assert.equal(f.lastRead()?.minRevision, 7n);
    assert.notEqual(f.requests.at(-1), msg, "a copy is sent");
    assert.deepEqual(msg, before);
    assert.equal(msg.read?.minRevision, 0n);

    const init = { cluster: "c", read: { consistency: ReadConsistency.STALE } };
    await state.listNodes(init);
    assert.equal(f.lastRead()?.minRevision, 7n);
    assert.deepEqual(init, { cluster: "c", read: { consistency: ReadConsistency.STALE } });
  });

  test("a read's answer with a higher revision raises the floor; a lower one does not lower it", async () => {
    const { f, state } = await afterWrite();
    f.revision = 12n;
    await state.listNodes({ cluster: "c", read: stale });
    assert.equal(f.lastRead()?.minRevision, 7n);
    f.revision = 5n;
    await state.listNodes({ cluster: "c", read: stale });
    assert.equal(f.lastRead()?.minRevision, 12n);
    await state.listNodes({ cluster: "c", read: stale });
    assert.equal(f.lastRead()?.minRevision, 12n);
  });

  test("a stream's request (watchPlans) carries the floor", async () => {
    const { f, t } = await afterWrite();
    const scheduler = createClient(SchedulerService, t);
    for await (const _ of scheduler.watchPlans({ cluster: "c", mode: ScheduleMode.DRY_RUN, read: stale })) break;
    assert.equal((f.requests.at(-1) as WatchPlansRequest).read?.minRevision, 7n);
  });
});
