from google.rpc import status_pb2 as _status_pb2
from sluice.v1 import types_pb2 as _types_pb2
from sluice.v1 import reads_pb2 as _reads_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SyncRequest(_message.Message):
    __slots__ = ("hello", "batch", "resync_chunk")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    RESYNC_CHUNK_FIELD_NUMBER: _ClassVar[int]
    hello: SyncHello
    batch: _types_pb2.DeltaBatch
    resync_chunk: ResyncChunk
    def __init__(self, hello: _Optional[_Union[SyncHello, _Mapping]] = ..., batch: _Optional[_Union[_types_pb2.DeltaBatch, _Mapping]] = ..., resync_chunk: _Optional[_Union[ResyncChunk, _Mapping]] = ...) -> None: ...

class ResyncChunk(_message.Message):
    __slots__ = ("sequence", "deltas", "last")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    DELTAS_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    deltas: _containers.RepeatedCompositeFieldContainer[_types_pb2.Delta]
    last: bool
    def __init__(self, sequence: _Optional[int] = ..., deltas: _Optional[_Iterable[_Union[_types_pb2.Delta, _Mapping]]] = ..., last: _Optional[bool] = ...) -> None: ...

class SyncHello(_message.Message):
    __slots__ = ("cluster", "resume_revision", "resume_store_id")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    RESUME_REVISION_FIELD_NUMBER: _ClassVar[int]
    RESUME_STORE_ID_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    resume_revision: int
    resume_store_id: str
    def __init__(self, cluster: _Optional[str] = ..., resume_revision: _Optional[int] = ..., resume_store_id: _Optional[str] = ...) -> None: ...

class SyncResponse(_message.Message):
    __slots__ = ("welcome", "ack", "rejected", "resync_required")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    RESYNC_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    welcome: SyncWelcome
    ack: BatchAck
    rejected: BatchRejected
    resync_required: ResyncRequired
    def __init__(self, welcome: _Optional[_Union[SyncWelcome, _Mapping]] = ..., ack: _Optional[_Union[BatchAck, _Mapping]] = ..., rejected: _Optional[_Union[BatchRejected, _Mapping]] = ..., resync_required: _Optional[_Union[ResyncRequired, _Mapping]] = ...) -> None: ...

class SyncWelcome(_message.Message):
    __slots__ = ("revision", "store_id")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    STORE_ID_FIELD_NUMBER: _ClassVar[int]
    revision: int
    store_id: str
    def __init__(self, revision: _Optional[int] = ..., store_id: _Optional[str] = ...) -> None: ...

class BatchAck(_message.Message):
    __slots__ = ("sequence", "revision")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    revision: int
    def __init__(self, sequence: _Optional[int] = ..., revision: _Optional[int] = ...) -> None: ...

class FieldViolation(_message.Message):
    __slots__ = ("field", "description")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    field: str
    description: str
    def __init__(self, field: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class BatchRejected(_message.Message):
    __slots__ = ("sequence", "code", "message", "violations", "status")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    code: int
    message: str
    violations: _containers.RepeatedCompositeFieldContainer[FieldViolation]
    status: _status_pb2.Status
    def __init__(self, sequence: _Optional[int] = ..., code: _Optional[int] = ..., message: _Optional[str] = ..., violations: _Optional[_Iterable[_Union[FieldViolation, _Mapping]]] = ..., status: _Optional[_Union[_status_pb2.Status, _Mapping]] = ...) -> None: ...

class ResyncRequired(_message.Message):
    __slots__ = ("revision", "reason")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    revision: int
    reason: str
    def __init__(self, revision: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class ApplyDeltasRequest(_message.Message):
    __slots__ = ("cluster", "batch")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    batch: _types_pb2.DeltaBatch
    def __init__(self, cluster: _Optional[str] = ..., batch: _Optional[_Union[_types_pb2.DeltaBatch, _Mapping]] = ...) -> None: ...

class ApplyDeltasResponse(_message.Message):
    __slots__ = ("revision",)
    REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: int
    def __init__(self, revision: _Optional[int] = ...) -> None: ...

class GetNodeRequest(_message.Message):
    __slots__ = ("cluster", "name", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    name: str
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., name: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class GetNodeResponse(_message.Message):
    __slots__ = ("node", "revision")
    NODE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    node: _types_pb2.Node
    revision: int
    def __init__(self, node: _Optional[_Union[_types_pb2.Node, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class ListNodesRequest(_message.Message):
    __slots__ = ("cluster", "page_size", "page_token", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    page_size: int
    page_token: str
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class ListNodesResponse(_message.Message):
    __slots__ = ("nodes", "next_page_token", "revision")
    NODES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[_types_pb2.Node]
    next_page_token: str
    revision: int
    def __init__(self, nodes: _Optional[_Iterable[_Union[_types_pb2.Node, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class GetQueueRequest(_message.Message):
    __slots__ = ("cluster", "name", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    name: str
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., name: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class GetQueueResponse(_message.Message):
    __slots__ = ("queue", "revision")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    queue: _types_pb2.Queue
    revision: int
    def __init__(self, queue: _Optional[_Union[_types_pb2.Queue, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class ListQueuesRequest(_message.Message):
    __slots__ = ("cluster", "page_size", "page_token", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    page_size: int
    page_token: str
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class ListQueuesResponse(_message.Message):
    __slots__ = ("queues", "next_page_token", "revision")
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    queues: _containers.RepeatedCompositeFieldContainer[_types_pb2.Queue]
    next_page_token: str
    revision: int
    def __init__(self, queues: _Optional[_Iterable[_Union[_types_pb2.Queue, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class GetJobRequest(_message.Message):
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

class GetJobResponse(_message.Message):
    __slots__ = ("job", "revision")
    JOB_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    job: _types_pb2.Job
    revision: int
    def __init__(self, job: _Optional[_Union[_types_pb2.Job, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("cluster", "page_size", "page_token", "queue", "namespace", "phases", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    PHASES_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    page_size: int
    page_token: str
    queue: str
    namespace: str
    phases: _containers.RepeatedScalarFieldContainer[_types_pb2.JobPhase]
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., queue: _Optional[str] = ..., namespace: _Optional[str] = ..., phases: _Optional[_Iterable[_Union[_types_pb2.JobPhase, str]]] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class ListJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_page_token", "revision")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_types_pb2.Job]
    next_page_token: str
    revision: int
    def __init__(self, jobs: _Optional[_Iterable[_Union[_types_pb2.Job, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class GetTaskRequest(_message.Message):
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

class GetTaskResponse(_message.Message):
    __slots__ = ("task", "revision")
    TASK_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    task: _types_pb2.Task
    revision: int
    def __init__(self, task: _Optional[_Union[_types_pb2.Task, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("cluster", "page_size", "page_token", "namespace", "job", "node", "statuses", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    page_size: int
    page_token: str
    namespace: str
    job: str
    node: str
    statuses: _containers.RepeatedScalarFieldContainer[_types_pb2.TaskStatus]
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., namespace: _Optional[str] = ..., job: _Optional[str] = ..., node: _Optional[str] = ..., statuses: _Optional[_Iterable[_Union[_types_pb2.TaskStatus, str]]] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks", "next_page_token", "revision")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_types_pb2.Task]
    next_page_token: str
    revision: int
    def __init__(self, tasks: _Optional[_Iterable[_Union[_types_pb2.Task, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class ListClustersRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "read")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    read: _reads_pb2.ReadOptions
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class ListClustersResponse(_message.Message):
    __slots__ = ("clusters", "next_page_token")
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    clusters: _containers.RepeatedCompositeFieldContainer[Cluster]
    next_page_token: str
    def __init__(self, clusters: _Optional[_Iterable[_Union[Cluster, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetClusterRequest(_message.Message):
    __slots__ = ("cluster", "read")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    read: _reads_pb2.ReadOptions
    def __init__(self, cluster: _Optional[str] = ..., read: _Optional[_Union[_reads_pb2.ReadOptions, _Mapping]] = ...) -> None: ...

class GetClusterResponse(_message.Message):
    __slots__ = ("cluster",)
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    cluster: Cluster
    def __init__(self, cluster: _Optional[_Union[Cluster, _Mapping]] = ...) -> None: ...

class DeleteClusterRequest(_message.Message):
    __slots__ = ("cluster",)
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    def __init__(self, cluster: _Optional[str] = ...) -> None: ...

class DeleteClusterResponse(_message.Message):
    __slots__ = ("cluster",)
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    cluster: Cluster
    def __init__(self, cluster: _Optional[_Union[Cluster, _Mapping]] = ...) -> None: ...

class Cluster(_message.Message):
    __slots__ = ("name", "revision", "objects", "has_config", "config_etag", "plans")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    OBJECTS_FIELD_NUMBER: _ClassVar[int]
    HAS_CONFIG_FIELD_NUMBER: _ClassVar[int]
    CONFIG_ETAG_FIELD_NUMBER: _ClassVar[int]
    PLANS_FIELD_NUMBER: _ClassVar[int]
    name: str
    revision: int
    objects: ObjectCounts
    has_config: bool
    config_etag: str
    plans: int
    def __init__(self, name: _Optional[str] = ..., revision: _Optional[int] = ..., objects: _Optional[_Union[ObjectCounts, _Mapping]] = ..., has_config: _Optional[bool] = ..., config_etag: _Optional[str] = ..., plans: _Optional[int] = ...) -> None: ...

class ObjectCounts(_message.Message):
    __slots__ = ("nodes", "queues", "jobs", "tasks", "priority_classes", "namespace_quotas", "disruption_budgets", "hyper_nodes")
    NODES_FIELD_NUMBER: _ClassVar[int]
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASSES_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_QUOTAS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTION_BUDGETS_FIELD_NUMBER: _ClassVar[int]
    HYPER_NODES_FIELD_NUMBER: _ClassVar[int]
    nodes: int
    queues: int
    jobs: int
    tasks: int
    priority_classes: int
    namespace_quotas: int
    disruption_budgets: int
    hyper_nodes: int
    def __init__(self, nodes: _Optional[int] = ..., queues: _Optional[int] = ..., jobs: _Optional[int] = ..., tasks: _Optional[int] = ..., priority_classes: _Optional[int] = ..., namespace_quotas: _Optional[int] = ..., disruption_budgets: _Optional[int] = ..., hyper_nodes: _Optional[int] = ...) -> None: ...
