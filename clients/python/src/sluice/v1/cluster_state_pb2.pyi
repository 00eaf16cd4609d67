from google.rpc import status_pb2 as _status_pb2
from sluice.v1 import types_pb2 as _types_pb2
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
    __slots__ = ("cluster", "name")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    name: str
    def __init__(self, cluster: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class GetNodeResponse(_message.Message):
    __slots__ = ("node", "revision")
    NODE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    node: _types_pb2.Node
    revision: int
    def __init__(self, node: _Optional[_Union[_types_pb2.Node, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class ListNodesRequest(_message.Message):
    __slots__ = ("cluster", "page_size", "page_token")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    page_size: int
    page_token: str
    def __init__(self, cluster: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("cluster", "name")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    name: str
    def __init__(self, cluster: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class GetQueueResponse(_message.Message):
    __slots__ = ("queue", "revision")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    queue: _types_pb2.Queue
    revision: int
    def __init__(self, queue: _Optional[_Union[_types_pb2.Queue, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class ListQueuesRequest(_message.Message):
    __slots__ = ("cluster", "page_size", "page_token")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    page_size: int
    page_token: str
    def __init__(self, cluster: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("cluster", "namespace", "name")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    namespace: str
    name: str
    def __init__(self, cluster: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class GetJobResponse(_message.Message):
    __slots__ = ("job", "revision")
    JOB_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    job: _types_pb2.Job
    revision: int
    def __init__(self, job: _Optional[_Union[_types_pb2.Job, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("cluster", "page_size", "page_token", "queue", "namespace")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    page_size: int
    page_token: str
    queue: str
    namespace: str
    def __init__(self, cluster: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., queue: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("cluster", "namespace", "name")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    namespace: str
    name: str
    def __init__(self, cluster: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class GetTaskResponse(_message.Message):
    __slots__ = ("task", "revision")
    TASK_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    task: _types_pb2.Task
    revision: int
    def __init__(self, task: _Optional[_Union[_types_pb2.Task, _Mapping]] = ..., revision: _Optional[int] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("cluster", "page_size", "page_token", "namespace", "job", "node")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    cluster: str
    page_size: int
    page_token: str
    namespace: str
    job: str
    node: str
    def __init__(self, cluster: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., namespace: _Optional[str] = ..., job: _Optional[str] = ..., node: _Optional[str] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks", "next_page_token", "revision")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_types_pb2.Task]
    next_page_token: str
    revision: int
    def __init__(self, tasks: _Optional[_Iterable[_Union[_types_pb2.Task, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...
