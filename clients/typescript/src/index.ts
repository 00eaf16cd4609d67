// TypeScript client of Sluice: the generated sluice.v1 messages (protobuf-es 2.x) and
// a thin wrapper over Connect's gRPC transport for Node.js.

import { clone, create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";

import { ClusterStateService } from "./gen/sluice/v1/cluster_state_pb.js";
import { LeaderTransport, type Member } from "./leader.js";
import {
  CommitPlanResponseSchema,
  DecisionOutcome,
  PlanSchema,
  RejectedDecisionSchema,
  SchedulerService,
  ScheduleMode,
  type CommitPlanResponse,
  type Decision,
  type ExplainJobResponse,
  type Plan,
  type RejectedDecision,
} from "./gen/sluice/v1/scheduler_pb.js";
import {
  DeltaSchema,
  JobSchema,
  NodeSchema,
  ObjectKind,
  QueueSchema,
  TaskSchema,
  type Delta,
  type Node as NodeMessage,
  type Task as TaskMessage,
} from "./gen/sluice/v1/types_pb.js";

export * from "./gen/sluice/v1/types_pb.js";
export * from "./gen/sluice/v1/cluster_state_pb.js";
export * from "./gen/sluice/v1/scheduler_pb.js";
export * from "./gen/sluice/v1/errors_pb.js";
export * from "./gen/sluice/v1/reads_pb.js";
export { ERROR_DOMAIN, errorInfo, errorReason, type ErrorInfo } from "./errors.js";
export { MAX_LEADER_HOPS, METADATA_LEADER, REASON_NOT_LEADER, leaderOf } from "./leader.js";

/** How a cycle's plan is handled: see ScheduleMode. */
export type Mode = "propose" | "auto_commit" | "dry_run";

const modes: Record<Mode, ScheduleMode> = {
  propose: ScheduleMode.PROPOSE,
  auto_commit: ScheduleMode.AUTO_COMMIT,
  dry_run: ScheduleMode.DRY_RUN,
};

/** Options of SluiceClient. */
export interface SluiceClientOptions {
  /** Cluster the client acts on unless a call names another. Default "default". */
  cluster?: string;
  /**
   * TLS: true for the system's roots, or PEM material (ca for the server's roots,
   * cert and key for mTLS). Default: plaintext.
   */
  tls?: boolean | { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer };
  /** Sent as "authorization: Bearer TOKEN" with every call. */
  token?: string;
  /**
   * Deadline of unary calls, in milliseconds, covering the hops of a call that follows the
   * leader. Default 30000; 0 means none.
   */
  timeoutMs?: number;
  /**
   * The other members of a replicated server ("host:port", or URLs), tried in turn when
   * the member in use cannot be reached or knows no leader. The members are the target
   * followed by these, without duplicates. Every member is reached with the same TLS
   * options, token and URL scheme as the target. The client follows the leader even
   * without them: see SluiceClient.
   */
  endpoints?: string[];
}

/** Per-call override of the client's cluster. */
export interface CallOptions {
  cluster?: string;
}

/**
 * A connection to a Sluice server. Calls reject with a ConnectError (code and
 * message, for example InvalidArgument naming the offending field); errorReason(err)
 * is its reason, such as ErrorReason.PLAN_EXPIRED.
 *
 * Plans come whole: schedule, getPlan, commit and watchPlans read every page of a plan's
 * decisions and job outcomes (the server sends them 1000 at a time).
 *
 *     const c = new SluiceClient("127.0.0.1:50051", { cluster: "demo" });
 *     await c.apply([node("n1", { cpu: "8" }), job("j"), task("j-0", "j", { cpu: "1" })], { replaceAll: true });
 *     const plan = await c.schedule();
 *     const { applied } = await c.commit(plan);
 *     c.close();
 *
 * Replicated servers (sluiced --raft-peers): the client follows the leader. A unary call
 * that a follower refuses (Code.Unavailable, reason NOT_LEADER naming the leader) is sent
 * again to the leader, up to MAX_LEADER_HOPS times, and later calls and streams go there.
 * A call that fails with Code.Unavailable because the member is unreachable, or with
 * reason STORE_UNAVAILABLE or STALE_READ_REFUSED, rejects (it may have taken effect), and
 * later calls go to the next member of the target and opts.endpoints. A stream that a
 * follower ends with NOT_LEADER rejects too; open a new one, it goes to the leader. The
 * raw clients state and scheduler follow the same way.
 *
 * Stale reads (a raw request's read: { consistency: ReadConsistency.STALE }) read this
 * client's writes: the client sends, as read.minRevision, the highest revision its calls saw
 * for the request's cluster (unless the request sets one), so the member that answers has
 * applied at least that much, or refuses with STALE_READ_REFUSED.
 */
export class SluiceClient {
  /** The raw ClusterStateService client. */
  readonly state: Client<typeof ClusterStateService>;
  /** The raw SchedulerService client. */
  readonly scheduler: Client<typeof SchedulerService>;
  /** Cluster the client acts on unless a call names another. */
  readonly cluster: string;
  private readonly transport: LeaderTransport;
  private readonly timeoutMs: number | undefined;

  /**
   * target is "host:port", or a URL ("http://host:port", "https://host:port"): the member
   * calls go to first. No connection is made until the first call.
   */
  constructor(target: string, opts: SluiceClientOptions = {}) {
    this.cluster = opts.cluster ?? "default";
    this.timeoutMs = opts.timeoutMs === 0 ? undefined : (opts.timeoutMs ?? 30_000);
    const secure = opts.tls !== undefined && opts.tls !== false;
    const scheme = /^([a-z]+):\/\//.exec(target)?.[1] ?? (secure ? "https" : "http");
    const tlsOptions = typeof opts.tls === "object" ? opts.tls : {};
    const interceptors: Interceptor[] = [];
    if (opts.token) {
      const value = `Bearer ${opts.token}`;
      interceptors.push((next) => (req) => {
        req.header.set("authorization", value);
        return next(req);
      });
    }
    const dial = (baseUrl: string): Member => {
      const sessionManager = new Http2SessionManager(baseUrl, undefined, tlsOptions);
      return {
        transport: createGrpcTransport({ baseUrl, sessionManager, interceptors }),
        close: () => sessionManager.abort(),
      };
    };
    this.transport = new LeaderTransport(dial, [target, ...(opts.endpoints ?? [])], scheme);
    this.state = createClient(ClusterStateService, this.transport);
    this.scheduler = createClient(SchedulerService, this.transport);
  }

  /** The URL of the member calls go to now ("http://host:port"). */
  get member(): string {
    return this.transport.current;
  }

  /** The members' URLs: the target, then the endpoints, without duplicates. */
  get members(): readonly string[] {
    return this.transport.members;
  }

  /** Closes the connections to every member; calls in progress fail. */
  close(): void {
    this.transport.close();
  }

  /**
   * Applies one batch of deltas atomically and returns the cluster's revision after
   * it. With replaceAll the cluster becomes exactly these objects.
   */
  async apply(deltas: Delta[], opts: CallOptions & { replaceAll?: boolean } = {}): Promise<bigint> {
    const resp = await this.state.applyDeltas(
      { cluster: opts.cluster ?? this.cluster, batch: { deltas, replaceAll: opts.replaceAll ?? false } },
      { timeoutMs: this.timeoutMs },
    );
    return resp.revision;
  }

  /** Every node, by name. */
  async nodes(opts: CallOptions = {}): Promise<NodeMessage[]> {
    const out: NodeMessage[] = [];
    let pageToken = "";
    do {
      const resp = await this.state.listNodes(
        { cluster: opts.cluster ?? this.cluster, pageSize: 1000, pageToken },
        { timeoutMs: this.timeoutMs },
      );
      out.push(...resp.nodes);
      pageToken = resp.nextPageToken;
    } while (pageToken !== "");
    return out;
  }

  /** Every task (of one job, when given). */
  async tasks(opts: CallOptions & { job?: string; namespace?: string } = {}): Promise<TaskMessage[]> {
    const out: TaskMessage[] = [];
    let pageToken = "";
    do {
      const resp = await this.state.listTasks(
        { cluster: opts.cluster ?? this.cluster, pageSize: 1000, pageToken, job: opts.job, namespace: opts.namespace },
        { timeoutMs: this.timeoutMs },
      );
      out.push(...resp.tasks);
      pageToken = resp.nextPageToken;
    } while (pageToken !== "");
    return out;
  }

  /**
   * Runs one cycle and returns its whole plan. The response holds the plan's first page
   * of decisions and job outcomes; schedule reads the others through GetPlan, so
   * plan.decisions and plan.jobs are complete (plan.counts sums them up). An
   * auto-committed plan's decisions carry their outcomes (see outcomes()).
   */
  async schedule(mode: Mode = "propose", opts: CallOptions = {}): Promise<Plan> {
    const resp = await this.scheduler.schedule(
      { cluster: opts.cluster ?? this.cluster, mode: modes[mode] },
      { timeoutMs: this.timeoutMs },
    );
    if (!resp.plan) throw new Error("sluice: Schedule returned no plan");
    return this.restOfPlan(resp.plan, resp.nextPageToken);
  }

  /**
   * A plan (by id, or a Plan to read again) with all its decisions and job outcomes, read
   * page by page: a proposed or committed plan the server still keeps (a committed plan's
   * decisions carry their outcome and rejectedReason), a discarded or expired one as its
   * summary (decisionsDropped), or a recent dry run's. Rejects with reason PLAN_NOT_FOUND
   * for any other.
   */
  async getPlan(plan: Plan | string, opts: CallOptions = {}): Promise<Plan> {
    const resp = await this.scheduler.getPlan(
      { cluster: clusterOf(plan, opts.cluster ?? this.cluster), planId: idOf(plan) },
      { timeoutMs: this.timeoutMs },
    );
    if (!resp.plan) throw new Error("sluice: GetPlan returned no plan");
    return this.restOfPlan(resp.plan, resp.nextPageToken);
  }

  /**
   * Completes a plan's first page (of a Schedule, CommitPlan, WatchPlans or GetPlan
   * response from the raw clients) with the pages that nextPageToken and the tokens after
   * it name, read through GetPlan. Returns first itself when the token is empty, else a
   * new Plan (first is left as it is). signal aborts the reading.
   */
  async restOfPlan(first: Plan, nextPageToken: string, opts: { signal?: AbortSignal } = {}): Promise<Plan> {
    if (nextPageToken === "") return first;
    const whole = clone(PlanSchema, first);
    const pageSize = Math.max(first.decisions.length, first.jobs.length);
    let pageToken = nextPageToken;
    while (pageToken !== "") {
      const resp = await this.scheduler.getPlan(
        { cluster: first.cluster || this.cluster, planId: first.id, pageSize, pageToken },
        { timeoutMs: this.timeoutMs, signal: opts.signal },
      );
      whole.decisions.push(...(resp.plan?.decisions ?? []));
      whole.jobs.push(...(resp.plan?.jobs ?? []));
      pageToken = resp.nextPageToken;
    }
    return whole;
  }

  /**
   * Commits a proposed plan. `applied` lists, for the whole plan, the decisions that
   * took effect, `rejected` those refused because the cluster changed since the plan's
   * base revision (each with its reason); `plan` is the committed plan whole, each bind
   * and eviction with its outcome.
   *
   * The server answers with the committed plan's first page and lists only that page's
   * decisions: for a plan of more than one page, commit reads the rest through GetPlan
   * and takes applied and rejected from the committed record (see outcomes()).
   * Committing a committed plan again answers the same, so a commit whose answer was lost
   * may be retried. A plan that is not proposed rejects with errorReason(err)
   * PLAN_DISCARDED, PLAN_EXPIRED, PLAN_DRY_RUN or PLAN_NOT_FOUND.
   */
  async commit(plan: Plan | string, opts: CallOptions = {}): Promise<CommitPlanResponse> {
    const resp = await this.scheduler.commitPlan(
      { cluster: clusterOf(plan, opts.cluster ?? this.cluster), planId: idOf(plan) },
      { timeoutMs: this.timeoutMs },
    );
    if (resp.nextPageToken === "" || !resp.plan) return resp;
    const whole = await this.restOfPlan(resp.plan, resp.nextPageToken);
    const { applied, rejected } = outcomes(whole);
    return create(CommitPlanResponseSchema, { revision: resp.revision, applied, rejected, plan: whole });
  }

  /** Drops a proposed plan. */
  async discard(plan: Plan | string, opts: CallOptions = {}): Promise<void> {
    await this.scheduler.discardPlan(
      { cluster: clusterOf(plan, opts.cluster ?? this.cluster), planId: idOf(plan) },
      { timeoutMs: this.timeoutMs },
    );
  }

  /** A job's outcome in the most recent cycle that considered it. */
  async explain(job: string, opts: CallOptions & { namespace?: string } = {}): Promise<ExplainJobResponse> {
    return this.scheduler.explainJob(
      { cluster: opts.cluster ?? this.cluster, namespace: opts.namespace ?? "", name: job },
      { timeoutMs: this.timeoutMs },
    );
  }

  /**
   * The whole plan of every cycle the server runs as the cluster changes (and at least
   * every periodMs), its pages after the first read through GetPlan. Stop with signal,
   * or by leaving the for-await loop.
   */
  async *watchPlans(
    mode: Mode = "propose",
    opts: CallOptions & { periodMs?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<Plan> {
    const req = {
      cluster: opts.cluster ?? this.cluster,
      mode: modes[mode],
      period: opts.periodMs ? durationFromMs(opts.periodMs) : undefined,
    };
    for await (const resp of this.scheduler.watchPlans(req, { signal: opts.signal })) {
      if (resp.plan) yield await this.restOfPlan(resp.plan, resp.nextPageToken, { signal: opts.signal });
    }
  }
}

/**
 * Splits a committed plan's binds and evictions by their outcome: the applied decisions,
 * and the rejected ones with their reason. Pipelines are in neither; a decision without an
 * outcome (from a server that predates outcomes) counts as applied.
 */
export function outcomes(plan: Plan): { applied: Decision[]; rejected: RejectedDecision[] } {
  const applied: Decision[] = [];
  const rejected: RejectedDecision[] = [];
  for (const d of plan.decisions) {
    if (d.kind.case === "pipeline") continue;
    if (d.outcome === DecisionOutcome.REJECTED) {
      rejected.push(create(RejectedDecisionSchema, { decision: d, reason: d.rejectedReason }));
    } else {
      applied.push(d);
    }
  }
  return { applied, rejected };
}

function idOf(plan: Plan | string): string {
  return typeof plan === "string" ? plan : plan.id;
}

function clusterOf(plan: Plan | string, fallback: string): string {
  return typeof plan === "string" || plan.cluster === "" ? fallback : plan.cluster;
}

/**
 * The fields of a message's init object (what create() takes), without those the
 * builder sets itself.
 */
export type Fields<Desc extends DescMessage, Set extends string> = Omit<
  Exclude<MessageInitShape<Desc>, MessageShape<Desc>>,
  Set | "$typeName"
>;

/** An upsert of a node offering allocatable (quantities: { cpu: "8", memory: "32Gi" }). */
export function node(
  name: string,
  allocatable: Record<string, string>,
  fields: Fields<typeof NodeSchema, "name" | "allocatable"> = {},
): Delta {
  return create(DeltaSchema, {
    change: { case: "upsertNode", value: create(NodeSchema, { ...fields, name, allocatable }) },
  });
}

/** An upsert of a queue. */
export function queue(name: string, fields: Fields<typeof QueueSchema, "name"> = {}): Delta {
  return create(DeltaSchema, { change: { case: "upsertQueue", value: create(QueueSchema, { ...fields, name }) } });
}

/** An upsert of a job: a gang of minAvailable tasks (default 1). */
export function job(name: string, fields: Fields<typeof JobSchema, "name"> = {}): Delta {
  return create(DeltaSchema, { change: { case: "upsertJob", value: create(JobSchema, { ...fields, name }) } });
}

/** An upsert of a task of job asking for resources. */
export function task(
  name: string,
  job: string,
  resources: Record<string, string> = {},
  fields: Fields<typeof TaskSchema, "name" | "job" | "resources"> = {},
): Delta {
  return create(DeltaSchema, {
    change: { case: "upsertTask", value: create(TaskSchema, { ...fields, name, job, resources }) },
  });
}

/** A deletion; namespace matters for jobs, tasks and disruption budgets. */
export function remove(kind: ObjectKind, name: string, namespace = ""): Delta {
  return create(DeltaSchema, { change: { case: "delete", value: { kind, name, namespace } } });
}

/**
 * A task or job reference (a TaskRef or JobRef: bind.task, evict.forTask, outcome.job, ...)
 * as "namespace/name", an empty namespace being "default"; "" for an unset one (an eviction
 * that makes room for no task). A namespace never holds "/", so the full name of a valid
 * reference is unambiguous, even for a name that holds one.
 */
export function fullName(ref: { namespace: string; name: string } | undefined): string {
  if (!ref || ref.name === "") return "";
  return `${ref.namespace || "default"}/${ref.name}`;
}

/** Maps each bound task, by its full name ("namespace/name", see fullName), to its node. */
export function binds(decisions: Decision[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of decisions) {
    if (d.kind.case === "bind") out[fullName(d.kind.value.task)] = d.kind.value.node;
  }
  return out;
}
