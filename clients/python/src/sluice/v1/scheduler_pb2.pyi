import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from sluice.v1 import types_pb2 as _types_pb2
from sluice.v1 import reads_pb2 as _reads_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScheduleMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULE_MODE_UNSPECIFIED: _ClassVar[ScheduleMode]
    SCHEDULE_MODE_PROPOSE: _ClassVar[ScheduleMode]
    SCHEDULE_MODE_AUTO_COMMIT: _ClassVar[ScheduleMode]
    SCHEDULE_MODE_DRY_RUN: _ClassVar[ScheduleMode]

class PlanState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLAN_STATE_UNSPECIFIED: _ClassVar[PlanState]
    PLAN_STATE_PROPOSED: _ClassVar[PlanState]
    PLAN_STATE_COMMITTED: _ClassVar[PlanState]
    PLAN_STATE_DISCARDED: _ClassVar[PlanState]
    PLAN_STATE_EXPIRED: _ClassVar[PlanState]
    PLAN_STATE_DRY_RUN: _ClassVar[PlanState]

class DecisionOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_OUTCOME_UNSPECIFIED: _ClassVar[DecisionOutcome]
    DECISION_OUTCOME_APPLIED: _ClassVar[DecisionOutcome]
    DECISION_OUTCOME_REJECTED: _ClassVar[DecisionOutcome]
SCHEDULE_MODE_UNSPECIFIED: ScheduleMode
SCHEDULE_MODE_PROPOSE: ScheduleMode
SCHEDULE_MODE_AUTO_COMMIT: ScheduleMode
SCHEDULE_MODE_DRY_RUN: ScheduleMode
PLAN_STATE_UNSPECIFIED: PlanState
PLAN_STATE_PROPOSED: PlanState
PLAN_STATE_COMMITTED: PlanState
PLAN_STATE_DISCARDED: PlanState
PLAN_STATE_EXPIRED: PlanState
PLAN_STATE_DRY_RUN: PlanState
DECISION_OUTCOME_UNSPECIFIED: DecisionOutcome
DECISION_OUTCOME_APPLIED: DecisionOutcome
DECISION_OUTCOME_REJECTED: DecisionOutcome

class ScheduleRequest(_message.Message):
    __slots__ = ("cluster", "mode", "config_override", "now", "page_size", "hypothetical", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    CONFIG_OVERRIDE_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    HYPOTHETICAL_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    mode: ScheduleMode
    config_override: str
    now: _timestamp_pb2.Timestamp
    page_size: int
    hypothetical: _types_pb2.DeltaBatch
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., mode: _Optional[_Union[ScheduleMode, str]] = ..., config_override: _Optional[str] = ..., now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., page_size: _Optional[int] = ..., hypothetical: _Optional[_Union[_types_pb2.DeltaBatch, _Mapping]] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class ScheduleResponse(_message.Message):
    __slots__ = ("plan", "commit", "next_page_token")
    PLAN_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    plan: Plan
    commit: CommitPlanResponse
    next_page_token: str
    def __init__(self, plan: _Optional[_Union[Plan, _Mapping]] = ..., commit: _Optional[_Union[CommitPlanResponse, _Mapping]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetPlanRequest(_message.Message):
    __slots__ = ("cluster", "plan_id", "page_size", "page_token", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    plan_id: str
    page_size: int
    page_token: str
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., plan_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class GetPlanResponse(_message.Message):
    __slots__ = ("plan", "next_page_token")
    PLAN_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    plan: Plan
    next_page_token: str
    def __init__(self, plan: _Optional[_Union[Plan, _Mapping]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PlanCounts(_message.Message):
    __slots__ = ("binds", "pipelines", "evicts", "jobs", "applied", "rejected")
    BINDS_FIELD_NUMBER: _ClassVar[int]
    PIPELINES_FIELD_NUMBER: _ClassVar[int]
    EVICTS_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    binds: int
    pipelines: int
    evicts: int
    jobs: int
    applied: int
    rejected: int
    def __init__(self, binds: _Optional[int] = ..., pipelines: _Optional[int] = ..., evicts: _Optional[int] = ..., jobs: _Optional[int] = ..., applied: _Optional[int] = ..., rejected: _Optional[int] = ...) -> None: ...

class Plan(_message.Message):
    __slots__ = ("id", "cluster", "base_revision", "decisions", "jobs", "stats", "state", "expires_at", "scheduled_at", "committed_revision", "counts", "decisions_dropped")
    ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    BASE_REVISION_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_AT_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_DROPPED_FIELD_NUMBER: _ClassVar[int]
    id: str
    cluster: str
    base_revision: int
    decisions: _containers.RepeatedCompositeFieldContainer[Decision]
    jobs: _containers.RepeatedCompositeFieldContainer[JobOutcome]
    stats: CycleStats
    state: PlanState
    expires_at: _timestamp_pb2.Timestamp
    scheduled_at: _timestamp_pb2.Timestamp
    committed_revision: int
    counts: PlanCounts
    decisions_dropped: bool
    def __init__(self, id: _Optional[str] = ..., cluster: _Optional[str] = ..., base_revision: _Optional[int] = ..., decisions: _Optional[_Iterable[_Union[Decision, _Mapping]]] = ..., jobs: _Optional[_Iterable[_Union[JobOutcome, _Mapping]]] = ..., stats: _Optional[_Union[CycleStats, _Mapping]] = ..., state: _Optional[_Union[PlanState, str]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., scheduled_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., committed_revision: _Optional[int] = ..., counts: _Optional[_Union[PlanCounts, _Mapping]] = ..., decisions_dropped: _Optional[bool] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("bind", "pipeline", "evict", "outcome", "rejected_reason", "hypothetical")
    BIND_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    EVICT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REJECTED_REASON_FIELD_NUMBER: _ClassVar[int]
    HYPOTHETICAL_FIELD_NUMBER: _ClassVar[int]
    bind: BindDecision
    pipeline: PipelineDecision
    evict: EvictDecision
    outcome: DecisionOutcome
    rejected_reason: str
    hypothetical: bool
    def __init__(self, bind: _Optional[_Union[BindDecision, _Mapping]] = ..., pipeline: _Optional[_Union[PipelineDecision, _Mapping]] = ..., evict: _Optional[_Union[EvictDecision, _Mapping]] = ..., outcome: _Optional[_Union[DecisionOutcome, str]] = ..., rejected_reason: _Optional[str] = ..., hypothetical: _Optional[bool] = ...) -> None: ...

class BindDecision(_message.Message):
    __slots__ = ("task", "job", "node", "device_ids")
    TASK_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_IDS_FIELD_NUMBER: _ClassVar[int]
    task: _types_pb2.TaskRef
    job: _types_pb2.JobRef
    node: str
    device_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, task: _Optional[_Union[_types_pb2.TaskRef, _Mapping]] = ..., job: _Optional[_Union[_types_pb2.JobRef, _Mapping]] = ..., node: _Optional[str] = ..., device_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class PipelineDecision(_message.Message):
    __slots__ = ("task", "job", "node")
    TASK_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    task: _types_pb2.TaskRef
    job: _types_pb2.JobRef
    node: str
    def __init__(self, task: _Optional[_Union[_types_pb2.TaskRef, _Mapping]] = ..., job: _Optional[_Union[_types_pb2.JobRef, _Mapping]] = ..., node: _Optional[str] = ...) -> None: ...

class EvictDecision(_message.Message):
    __slots__ = ("task", "job", "node", "reason", "for_task", "action")
    TASK_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FOR_TASK_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    task: _types_pb2.TaskRef
    job: _types_pb2.JobRef
    node: str
    reason: str
    for_task: _types_pb2.TaskRef
    action: str
    def __init__(self, task: _Optional[_Union[_types_pb2.TaskRef, _Mapping]] = ..., job: _Optional[_Union[_types_pb2.JobRef, _Mapping]] = ..., node: _Optional[str] = ..., reason: _Optional[str] = ..., for_task: _Optional[_Union[_types_pb2.TaskRef, _Mapping]] = ..., action: _Optional[str] = ...) -> None: ...

class ReasonCount(_message.Message):
    __slots__ = ("reason", "nodes")
    REASON_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    reason: str
    nodes: int
    def __init__(self, reason: _Optional[str] = ..., nodes: _Optional[int] = ...) -> None: ...

class GangStatus(_message.Message):
    __slots__ = ("placeable", "min_available")
    PLACEABLE_FIELD_NUMBER: _ClassVar[int]
    MIN_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    placeable: int
    min_available: int
    def __init__(self, placeable: _Optional[int] = ..., min_available: _Optional[int] = ...) -> None: ...

class Explanation(_message.Message):
    __slots__ = ("summary", "nodes_total", "reasons", "gang", "queue_reason")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    NODES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    GANG_FIELD_NUMBER: _ClassVar[int]
    QUEUE_REASON_FIELD_NUMBER: _ClassVar[int]
    summary: str
    nodes_total: int
    reasons: _containers.RepeatedCompositeFieldContainer[ReasonCount]
    gang: GangStatus
    queue_reason: str
    def __init__(self, summary: _Optional[str] = ..., nodes_total: _Optional[int] = ..., reasons: _Optional[_Iterable[_Union[ReasonCount, _Mapping]]] = ..., gang: _Optional[_Union[GangStatus, _Mapping]] = ..., queue_reason: _Optional[str] = ...) -> None: ...

class JobOutcome(_message.Message):
    __slots__ = ("job", "previous_phase", "phase", "ready", "pending", "min_available", "explanation", "hypothetical")
    JOB_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_PHASE_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    MIN_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    HYPOTHETICAL_FIELD_NUMBER: _ClassVar[int]
    job: _types_pb2.JobRef
    previous_phase: _types_pb2.JobPhase
    phase: _types_pb2.JobPhase
    ready: int
    pending: int
    min_available: int
    explanation: Explanation
    hypothetical: bool
    def __init__(self, job: _Optional[_Union[_types_pb2.JobRef, _Mapping]] = ..., previous_phase: _Optional[_Union[_types_pb2.JobPhase, str]] = ..., phase: _Optional[_Union[_types_pb2.JobPhase, str]] = ..., ready: _Optional[int] = ..., pending: _Optional[int] = ..., min_available: _Optional[int] = ..., explanation: _Optional[_Union[Explanation, _Mapping]] = ..., hypothetical: _Optional[bool] = ...) -> None: ...

class ActionTiming(_message.Message):
    __slots__ = ("action", "duration")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    action: str
    duration: _duration_pb2.Duration
    def __init__(self, action: _Optional[str] = ..., duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class CycleStats(_message.Message):
    __slots__ = ("actions", "total")
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[ActionTiming]
    total: _duration_pb2.Duration
    def __init__(self, actions: _Optional[_Iterable[_Union[ActionTiming, _Mapping]]] = ..., total: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class CommitPlanRequest(_message.Message):
    __slots__ = ("cluster", "plan_id", "page_size")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    plan_id: str
    page_size: int
    def __init__(self, cluster: _Optional[str] = ..., plan_id: _Optional[str] = ..., page_size: _Optional[int] = ...) -> None: ...

class RejectedDecision(_message.Message):
    __slots__ = ("decision", "reason")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    reason: str
    def __init__(self, decision: _Optional[_Union[Decision, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class CommitPlanResponse(_message.Message):
    __slots__ = ("revision", "applied", "rejected", "plan", "next_page_token")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    revision: int
    applied: _containers.RepeatedCompositeFieldContainer[Decision]
    rejected: _containers.RepeatedCompositeFieldContainer[RejectedDecision]
    plan: Plan
    next_page_token: str
    def __init__(self, revision: _Optional[int] = ..., applied: _Optional[_Iterable[_Union[Decision, _Mapping]]] = ..., rejected: _Optional[_Iterable[_Union[RejectedDecision, _Mapping]]] = ..., plan: _Optional[_Union[Plan, _Mapping]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DiscardPlanRequest(_message.Message):
    __slots__ = ("cluster", "plan_id")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    plan_id: str
    def __init__(self, cluster: _Optional[str] = ..., plan_id: _Optional[str] = ...) -> None: ...

class DiscardPlanResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ExplainJobRequest(_message.Message):
    __slots__ = ("cluster", "namespace", "name", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    namespace: str
    name: str
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class ExplainJobResponse(_message.Message):
    __slots__ = ("outcome", "plan_id")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    outcome: JobOutcome
    plan_id: str
    def __init__(self, outcome: _Optional[_Union[JobOutcome, _Mapping]] = ..., plan_id: _Optional[str] = ...) -> None: ...

class WatchPlansRequest(_message.Message):
    __slots__ = ("cluster", "mode", "period", "takeover", "page_size", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    TAKEOVER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    mode: ScheduleMode
    period: _duration_pb2.Duration
    takeover: bool
    page_size: int
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., mode: _Optional[_Union[ScheduleMode, str]] = ..., period: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., takeover: _Optional[bool] = ..., page_size: _Optional[int] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class WatchPlansResponse(_message.Message):
    __slots__ = ("plan", "commit", "next_page_token")
    PLAN_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    plan: Plan
    commit: CommitPlanResponse
    next_page_token: str
    def __init__(self, plan: _Optional[_Union[Plan, _Mapping]] = ..., commit: _Optional[_Union[CommitPlanResponse, _Mapping]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetSchedulerConfigRequest(_message.Message):
    __slots__ = ("cluster", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class GetSchedulerConfigResponse(_message.Message):
    __slots__ = ("config", "etag")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    config: str
    etag: str
    def __init__(self, config: _Optional[str] = ..., etag: _Optional[str] = ...) -> None: ...

class UpdateSchedulerConfigRequest(_message.Message):
    __slots__ = ("cluster", "config", "etag")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    config: str
    etag: str
    def __init__(self, cluster: _Optional[str] = ..., config: _Optional[str] = ..., etag: _Optional[str] = ...) -> None: ...

class UpdateSchedulerConfigResponse(_message.Message):
    __slots__ = ("config", "etag")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    config: str
    etag: str
    def __init__(self, config: _Optional[str] = ..., etag: _Optional[str] = ...) -> None: ...
