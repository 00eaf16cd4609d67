"""A small wrapper over the generated ``sluice.v1`` stubs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Optional, Union

import grpc

from sluice.leader import LeaderChannel
from sluice.v1 import cluster_state_pb2 as cs
from sluice.v1 import cluster_state_pb2_grpc as cs_grpc
from sluice.v1 import scheduler_pb2 as sch
from sluice.v1 import scheduler_pb2_grpc as sch_grpc
from sluice.v1 import types_pb2 as types

__all__ = [
    "SluiceClient",
    "node",
    "queue",
    "job",
    "task",
    "delete",
    "binds",
    "full_name",
    "outcomes",
]

_MODES = {
    "propose": sch.SCHEDULE_MODE_PROPOSE,
    "auto_commit": sch.SCHEDULE_MODE_AUTO_COMMIT,
    "dry_run": sch.SCHEDULE_MODE_DRY_RUN,
}

_KINDS = {
    "node": types.OBJECT_KIND_NODE,
    "queue": types.OBJECT_KIND_QUEUE,
    "job": types.OBJECT_KIND_JOB,
    "task": types.OBJECT_KIND_TASK,
    "priority_class": types.OBJECT_KIND_PRIORITY_CLASS,
    "namespace_quota": types.OBJECT_KIND_NAMESPACE_QUOTA,
    "disruption_budget": types.OBJECT_KIND_DISRUPTION_BUDGET,
    "hyper_node": types.OBJECT_KIND_HYPER_NODE,
}

PlanOrId = Union[sch.Plan, str]


class SluiceClient:
    """A connection to a Sluice server, bound to one cluster by default.

    ``SluiceClient("127.0.0.1:50051")`` connects in plaintext. Pass ``tls=True`` (the
    system's roots) or PEM bytes in ``root_certificates`` (and ``private_key`` with
    ``certificate_chain`` for mTLS) to use TLS, and ``token`` to send
    ``authorization: Bearer TOKEN`` with every call. Every method takes ``cluster=`` to
    act on another cluster than the default one, and raises ``grpc.RpcError`` when the
    call fails (``INVALID_ARGUMENT`` for a bad request, with the offending field in the
    message); ``sluice.error_reason(err)`` is its reason, such as ``"PLAN_EXPIRED"``.

    Plans come whole: ``schedule``, ``get_plan``, ``commit`` and ``watch_plans`` read every
    page of a plan's decisions and job outcomes (the server sends them 1000 at a time).

    A replicated server (``sluiced --raft-peers``): pass the other members' addresses in
    ``endpoints``; the client follows the leader (see ``sluice.LeaderChannel``). A call that
    a follower refuses with ``NOT_LEADER`` is sent again to the leader it names (at most 3
    hops), and later calls go there; a member that cannot be reached or answers
    ``UNAVAILABLE`` with reason ``STORE_UNAVAILABLE`` or ``STALE_READ_REFUSED`` makes later
    calls go to the next member, and that call's error is raised. Every channel the client
    opens has the same TLS settings, options and token.
    A stale read (``read=ReadOptions(consistency=READ_CONSISTENCY_STALE)``) carries the
    highest revision of its cluster the client saw as ``min_revision``, so it reads the
    client's own writes on any member (see ``sluice.ryw``).

    The raw stubs are ``client.state`` (ClusterStateService) and ``client.scheduler``
    (SchedulerService); they follow the leader too. Use the client as a context manager,
    or call ``close()``.
    """

    def __init__(
        self,
        target: str,
        cluster: str = "default",
        *,
        tls: bool = False,
        root_certificates: Optional[bytes] = None,
        private_key: Optional[bytes] = None,
        certificate_chain: Optional[bytes] = None,
        token: Optional[str] = None,
        timeout: Optional[float] = 30.0,
        options: Sequence[tuple[str, object]] = (),
        endpoints: Iterable[str] = (),
    ) -> None:
        self.cluster = cluster
        self.timeout = timeout
        opts = list(options)
        creds: Optional[grpc.ChannelCredentials] = None
        if tls or root_certificates or private_key or certificate_chain:
            creds = grpc.ssl_channel_credentials(root_certificates, private_key, certificate_chain)

        def open_channel(address: str) -> grpc.Channel:
            if creds is not None:
                return grpc.secure_channel(address, creds, options=opts)
            return grpc.insecure_channel(address, options=opts)

        self._channel = LeaderChannel(target, endpoints, open_channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else None
        self.state = cs_grpc.ClusterStateServiceStub(self._channel)
        self.scheduler = sch_grpc.SchedulerServiceStub(self._channel)

    def __enter__(self) -> "SluiceClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def members(self) -> tuple[str, ...]:
        """The members' addresses: ``target``, then the other ``endpoints``."""
        return self._channel.members

    @property
    def current_member(self) -> str:
        """The address calls go to now: a member, or the leader a member named."""
        return self._channel.target

    def close(self) -> None:
        """Closes every channel the client opened."""
        self._channel.close()

    def _call(self, method, request):
        return method(request, timeout=self.timeout, metadata=self._metadata)

    # Cluster state.

    def apply(
        self,
        deltas: Iterable[types.Delta],
        *,
        replace_all: bool = False,
        cluster: Optional[str] = None,
    ) -> int:
        """Applies one batch of deltas atomically and returns the cluster's revision
        after it. With ``replace_all`` the cluster becomes exactly these objects."""
        req = cs.ApplyDeltasRequest(
            cluster=cluster or self.cluster,
            batch=types.DeltaBatch(deltas=list(deltas), replace_all=replace_all),
        )
        return self._call(self.state.ApplyDeltas, req).revision

    def nodes(self, *, cluster: Optional[str] = None) -> Iterator[types.Node]:
        """Yields every node, by name, page by page."""
        token = ""
        while True:
            resp = self._call(
                self.state.ListNodes,
                cs.ListNodesRequest(cluster=cluster or self.cluster, page_size=1000, page_token=token),
            )
            yield from resp.nodes
            token = resp.next_page_token
            if not token:
                return

    def tasks(
        self, *, job: str = "", namespace: str = "", cluster: Optional[str] = None
    ) -> Iterator[types.Task]:
        """Yields every task (of one job, when given), page by page."""
        token = ""
        while True:
            resp = self._call(
                self.state.ListTasks,
                cs.ListTasksRequest(
                    cluster=cluster or self.cluster, page_size=1000, page_token=token, job=job, namespace=namespace
                ),
            )
            yield from resp.tasks
            token = resp.next_page_token
            if not token:
                return

    # Scheduling.

    def schedule(self, mode: str = "propose", *, cluster: Optional[str] = None) -> sch.Plan:
        """Runs one cycle and returns its whole plan. ``mode`` is "propose" (commit or
        discard the plan afterwards), "auto_commit" or "dry_run".

        The response holds the plan's first page of decisions and job outcomes;
        ``schedule`` reads the others through GetPlan, so ``plan.decisions`` and
        ``plan.jobs`` are complete (``plan.counts`` sums them up). An auto-committed
        plan's decisions carry their outcomes (see ``outcomes``)."""
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {sorted(_MODES)}, not {mode!r}")
        req = sch.ScheduleRequest(cluster=cluster or self.cluster, mode=_MODES[mode])
        resp = self._call(self.scheduler.Schedule, req)
        return self.rest_of_plan(resp.plan, resp.next_page_token)

    def get_plan(self, plan: PlanOrId, *, cluster: Optional[str] = None) -> sch.Plan:
        """Returns a plan (by id, or a Plan to read again) with all its decisions and job
        outcomes, reading it page by page: a proposed or committed plan the server still
        keeps (a committed plan's decisions carry their outcome and rejected_reason), a
        discarded or expired one as its summary (``decisions_dropped``), or a recent dry
        run's. Raises ``grpc.RpcError`` with reason PLAN_NOT_FOUND for any other."""
        req = sch.GetPlanRequest(cluster=_cluster_of(plan, cluster or self.cluster), plan_id=_id_of(plan))
        resp = self._call(self.scheduler.GetPlan, req)
        return self.rest_of_plan(resp.plan, resp.next_page_token)

    def rest_of_plan(self, first: sch.Plan, next_page_token: str) -> sch.Plan:
        """Completes a plan's first page (of a Schedule, CommitPlan, WatchPlans or GetPlan
        response from the raw stubs) with the pages that ``next_page_token`` and the tokens
        after it name, read through GetPlan. Returns ``first`` itself when the token is
        empty, else a new Plan (``first`` is left as it is)."""
        if not next_page_token:
            return first
        whole = sch.Plan()
        whole.CopyFrom(first)
        size = max(len(first.decisions), len(first.jobs))
        token = next_page_token
        while token:
            resp = self._call(
                self.scheduler.GetPlan,
                sch.GetPlanRequest(
                    cluster=first.cluster or self.cluster, plan_id=first.id, page_size=size, page_token=token
                ),
            )
            whole.decisions.extend(resp.plan.decisions)
            whole.jobs.extend(resp.plan.jobs)
            token = resp.next_page_token
        return whole

    def commit(self, plan: PlanOrId, *, cluster: Optional[str] = None) -> sch.CommitPlanResponse:
        """Commits a proposed plan. The response lists, for the whole plan, the decisions
        that took effect (``applied``) and those refused because the cluster changed since
        the plan's base revision (``rejected``, each with its reason); ``plan`` is the
        committed plan whole, each bind and eviction with its outcome.

        The server answers with the first page of the committed plan and lists only that
        page's decisions: for a plan of more than one page, ``commit`` reads the rest
        through GetPlan and takes ``applied`` and ``rejected`` from the committed record
        (see ``outcomes``). Committing a committed plan again answers the same, so a commit
        whose answer was lost may be retried. Raises ``grpc.RpcError`` for a plan that is
        not proposed (``error_reason``: PLAN_DISCARDED, PLAN_EXPIRED, PLAN_DRY_RUN,
        PLAN_NOT_FOUND)."""
        req = sch.CommitPlanRequest(cluster=_cluster_of(plan, cluster or self.cluster), plan_id=_id_of(plan))
        resp = self._call(self.scheduler.CommitPlan, req)
        if not resp.next_page_token:
            return resp
        whole = self.rest_of_plan(resp.plan, resp.next_page_token)
        applied, rejected = outcomes(whole)
        return sch.CommitPlanResponse(revision=resp.revision, applied=applied, rejected=rejected, plan=whole)

    def discard(self, plan: PlanOrId, *, cluster: Optional[str] = None) -> None:
        """Drops a proposed plan."""
        req = sch.DiscardPlanRequest(cluster=_cluster_of(plan, cluster or self.cluster), plan_id=_id_of(plan))
        self._call(self.scheduler.DiscardPlan, req)

    def explain(
        self, job: str, *, namespace: str = "", cluster: Optional[str] = None
    ) -> sch.ExplainJobResponse:
        """Returns a job's outcome in the most recent cycle that considered it."""
        req = sch.ExplainJobRequest(cluster=cluster or self.cluster, namespace=namespace, name=job)
        return self._call(self.scheduler.ExplainJob, req)

    def watch_plans(
        self, mode: str = "propose", *, period_seconds: float = 0, cluster: Optional[str] = None
    ) -> Iterator[sch.Plan]:
        """Yields the whole plan of every cycle the server runs as the cluster changes
        (and at least every ``period_seconds``, 0 meaning the server's default), its
        pages after the first read through GetPlan. The stream runs without a timeout;
        cancel by closing the client or breaking out.

        On a replicated server a follower ends the stream with ``NOT_LEADER``: the error
        is raised, later calls go to the leader it names, and calling ``watch_plans``
        again watches there."""
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {sorted(_MODES)}, not {mode!r}")
        req = sch.WatchPlansRequest(cluster=cluster or self.cluster, mode=_MODES[mode])
        if period_seconds:
            req.period.FromNanoseconds(int(period_seconds * 1e9))
        for resp in self.scheduler.WatchPlans(req, metadata=self._metadata):
            yield self.rest_of_plan(resp.plan, resp.next_page_token)


def outcomes(plan: sch.Plan) -> tuple[list[sch.Decision], list[sch.RejectedDecision]]:
    """Splits a committed plan's binds and evictions by their outcome: the applied
    decisions, and the rejected ones with their reason. Pipelines are in neither; a decision
    without an outcome (from a server that predates outcomes) counts as applied."""
    applied: list[sch.Decision] = []
    rejected: list[sch.RejectedDecision] = []
    for d in plan.decisions:
        if d.WhichOneof("kind") == "pipeline":
            continue
        if d.outcome == sch.DECISION_OUTCOME_REJECTED:
            rejected.append(sch.RejectedDecision(decision=d, reason=d.rejected_reason))
        else:
            applied.append(d)
    return applied, rejected


def _id_of(plan: PlanOrId) -> str:
    return plan if isinstance(plan, str) else plan.id


def _cluster_of(plan: PlanOrId, default: str) -> str:
    if isinstance(plan, str) or not plan.cluster:
        return default
    return plan.cluster


# Delta builders: each returns a sluice.v1.Delta that creates or replaces an object.


def node(
    name: str,
    allocatable: Mapping[str, str],
    *,
    labels: Optional[Mapping[str, str]] = None,
    unschedulable: bool = False,
    **fields: object,
) -> types.Delta:
    """An upsert of a node offering ``allocatable`` (quantities such as
    ``{"cpu": "8", "memory": "32Gi", "pods": "110"}``)."""
    return types.Delta(
        upsert_node=types.Node(
            name=name, allocatable=dict(allocatable), labels=dict(labels or {}), unschedulable=unschedulable, **fields
        )
    )


def queue(name: str, *, weight: int = 1, **fields: object) -> types.Delta:
    """An upsert of a queue."""
    return types.Delta(upsert_queue=types.Queue(name=name, weight=weight, **fields))


def job(
    name: str, *, min_available: int = 1, queue: str = "", namespace: str = "", **fields: object
) -> types.Delta:
    """An upsert of a job (a gang of ``min_available`` tasks)."""
    return types.Delta(
        upsert_job=types.Job(name=name, namespace=namespace, queue=queue, min_available=min_available, **fields)
    )


def task(
    name: str,
    job: str,
    resources: Optional[Mapping[str, str]] = None,
    *,
    namespace: str = "",
    **fields: object,
) -> types.Delta:
    """An upsert of a task of ``job`` asking for ``resources``."""
    return types.Delta(
        upsert_task=types.Task(name=name, job=job, namespace=namespace, resources=dict(resources or {}), **fields)
    )


def delete(kind: str, name: str, *, namespace: str = "") -> types.Delta:
    """A deletion; ``kind`` is "node", "queue", "job", "task", "priority_class",
    "namespace_quota", "disruption_budget" or "hyper_node"."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, not {kind!r}")
    return types.Delta(delete=types.ObjectRef(kind=_KINDS[kind], namespace=namespace, name=name))


def full_name(ref: Union[types.TaskRef, types.JobRef, None]) -> str:
    """Returns a task or job reference (``bind.task``, ``evict.for_task``, ``outcome.job``,
    ...) as "namespace/name", an empty namespace being "default"; "" for an unset one (an
    eviction that makes room for no task). A namespace never holds "/", so the full name
    of a valid reference is unambiguous, even for a name that holds one."""
    if ref is None or not ref.name:
        return ""
    return f"{ref.namespace or 'default'}/{ref.name}"


def binds(decisions: Iterable[sch.Decision]) -> dict[str, str]:
    """Maps each bound task, by its full name ("namespace/name", see ``full_name``), to
    its node."""
    return {full_name(d.bind.task): d.bind.node for d in decisions if d.WhichOneof("kind") == "bind"}
