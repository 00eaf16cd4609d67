import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TaintEffect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TAINT_EFFECT_UNSPECIFIED: _ClassVar[TaintEffect]
    TAINT_EFFECT_NO_SCHEDULE: _ClassVar[TaintEffect]
    TAINT_EFFECT_PREFER_NO_SCHEDULE: _ClassVar[TaintEffect]
    TAINT_EFFECT_NO_EXECUTE: _ClassVar[TaintEffect]

class TolerationOperator(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOLERATION_OPERATOR_UNSPECIFIED: _ClassVar[TolerationOperator]
    TOLERATION_OPERATOR_EQUAL: _ClassVar[TolerationOperator]
    TOLERATION_OPERATOR_EXISTS: _ClassVar[TolerationOperator]

class WhenUnsatisfiable(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WHEN_UNSATISFIABLE_UNSPECIFIED: _ClassVar[WhenUnsatisfiable]
    WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE: _ClassVar[WhenUnsatisfiable]
    WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY: _ClassVar[WhenUnsatisfiable]

class QueueState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    QUEUE_STATE_UNSPECIFIED: _ClassVar[QueueState]
    QUEUE_STATE_OPEN: _ClassVar[QueueState]
    QUEUE_STATE_CLOSED: _ClassVar[QueueState]
    QUEUE_STATE_CLOSING: _ClassVar[QueueState]

class JobPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_PHASE_UNSPECIFIED: _ClassVar[JobPhase]
    JOB_PHASE_PENDING: _ClassVar[JobPhase]
    JOB_PHASE_INQUEUE: _ClassVar[JobPhase]
    JOB_PHASE_RUNNING: _ClassVar[JobPhase]
    JOB_PHASE_COMPLETED: _ClassVar[JobPhase]
    JOB_PHASE_UNKNOWN: _ClassVar[JobPhase]

class NetworkTopologyMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NETWORK_TOPOLOGY_MODE_UNSPECIFIED: _ClassVar[NetworkTopologyMode]
    NETWORK_TOPOLOGY_MODE_HARD: _ClassVar[NetworkTopologyMode]
    NETWORK_TOPOLOGY_MODE_SOFT: _ClassVar[NetworkTopologyMode]

class TaskStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_STATUS_UNSPECIFIED: _ClassVar[TaskStatus]
    TASK_STATUS_PENDING: _ClassVar[TaskStatus]
    TASK_STATUS_ALLOCATED: _ClassVar[TaskStatus]
    TASK_STATUS_PIPELINED: _ClassVar[TaskStatus]
    TASK_STATUS_BINDING: _ClassVar[TaskStatus]
    TASK_STATUS_BOUND: _ClassVar[TaskStatus]
    TASK_STATUS_RUNNING: _ClassVar[TaskStatus]
    TASK_STATUS_RELEASING: _ClassVar[TaskStatus]
    TASK_STATUS_SUCCEEDED: _ClassVar[TaskStatus]
    TASK_STATUS_FAILED: _ClassVar[TaskStatus]
    TASK_STATUS_UNKNOWN: _ClassVar[TaskStatus]

class ObjectKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OBJECT_KIND_UNSPECIFIED: _ClassVar[ObjectKind]
    OBJECT_KIND_NODE: _ClassVar[ObjectKind]
    OBJECT_KIND_QUEUE: _ClassVar[ObjectKind]
    OBJECT_KIND_JOB: _ClassVar[ObjectKind]
    OBJECT_KIND_TASK: _ClassVar[ObjectKind]
    OBJECT_KIND_PRIORITY_CLASS: _ClassVar[ObjectKind]
    OBJECT_KIND_NAMESPACE_QUOTA: _ClassVar[ObjectKind]
    OBJECT_KIND_DISRUPTION_BUDGET: _ClassVar[ObjectKind]
    OBJECT_KIND_HYPER_NODE: _ClassVar[ObjectKind]
TAINT_EFFECT_UNSPECIFIED: TaintEffect
TAINT_EFFECT_NO_SCHEDULE: TaintEffect
TAINT_EFFECT_PREFER_NO_SCHEDULE: TaintEffect
TAINT_EFFECT_NO_EXECUTE: TaintEffect
TOLERATION_OPERATOR_UNSPECIFIED: TolerationOperator
TOLERATION_OPERATOR_EQUAL: TolerationOperator
TOLERATION_OPERATOR_EXISTS: TolerationOperator
WHEN_UNSATISFIABLE_UNSPECIFIED: WhenUnsatisfiable
WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE: WhenUnsatisfiable
WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY: WhenUnsatisfiable
QUEUE_STATE_UNSPECIFIED: QueueState
QUEUE_STATE_OPEN: QueueState
QUEUE_STATE_CLOSED: QueueState
QUEUE_STATE_CLOSING: QueueState
JOB_PHASE_UNSPECIFIED: JobPhase
JOB_PHASE_PENDING: JobPhase
JOB_PHASE_INQUEUE: JobPhase
JOB_PHASE_RUNNING: JobPhase
JOB_PHASE_COMPLETED: JobPhase
JOB_PHASE_UNKNOWN: JobPhase
NETWORK_TOPOLOGY_MODE_UNSPECIFIED: NetworkTopologyMode
NETWORK_TOPOLOGY_MODE_HARD: NetworkTopologyMode
NETWORK_TOPOLOGY_MODE_SOFT: NetworkTopologyMode
TASK_STATUS_UNSPECIFIED: TaskStatus
TASK_STATUS_PENDING: TaskStatus
TASK_STATUS_ALLOCATED: TaskStatus
TASK_STATUS_PIPELINED: TaskStatus
TASK_STATUS_BINDING: TaskStatus
TASK_STATUS_BOUND: TaskStatus
TASK_STATUS_RUNNING: TaskStatus
TASK_STATUS_RELEASING: TaskStatus
TASK_STATUS_SUCCEEDED: TaskStatus
TASK_STATUS_FAILED: TaskStatus
TASK_STATUS_UNKNOWN: TaskStatus
OBJECT_KIND_UNSPECIFIED: ObjectKind
OBJECT_KIND_NODE: ObjectKind
OBJECT_KIND_QUEUE: ObjectKind
OBJECT_KIND_JOB: ObjectKind
OBJECT_KIND_TASK: ObjectKind
OBJECT_KIND_PRIORITY_CLASS: ObjectKind
OBJECT_KIND_NAMESPACE_QUOTA: ObjectKind
OBJECT_KIND_DISRUPTION_BUDGET: ObjectKind
OBJECT_KIND_HYPER_NODE: ObjectKind

class TaskRef(_message.Message):
    __slots__ = ("namespace", "name")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    name: str
    def __init__(self, namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class JobRef(_message.Message):
    __slots__ = ("namespace", "name")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    name: str
    def __init__(self, namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class Taint(_message.Message):
    __slots__ = ("key", "value", "effect")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    effect: TaintEffect
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., effect: _Optional[_Union[TaintEffect, str]] = ...) -> None: ...

class Toleration(_message.Message):
    __slots__ = ("key", "operator", "value", "effect")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    key: str
    operator: TolerationOperator
    value: str
    effect: TaintEffect
    def __init__(self, key: _Optional[str] = ..., operator: _Optional[_Union[TolerationOperator, str]] = ..., value: _Optional[str] = ..., effect: _Optional[_Union[TaintEffect, str]] = ...) -> None: ...

class NodeSelectorRequirement(_message.Message):
    __slots__ = ("key", "operator", "values")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    key: str
    operator: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, key: _Optional[str] = ..., operator: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class NodeSelectorTerm(_message.Message):
    __slots__ = ("match_expressions",)
    MATCH_EXPRESSIONS_FIELD_NUMBER: _ClassVar[int]
    match_expressions: _containers.RepeatedCompositeFieldContainer[NodeSelectorRequirement]
    def __init__(self, match_expressions: _Optional[_Iterable[_Union[NodeSelectorRequirement, _Mapping]]] = ...) -> None: ...

class PreferredSchedulingTerm(_message.Message):
    __slots__ = ("weight", "match_expressions")
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    MATCH_EXPRESSIONS_FIELD_NUMBER: _ClassVar[int]
    weight: int
    match_expressions: _containers.RepeatedCompositeFieldContainer[NodeSelectorRequirement]
    def __init__(self, weight: _Optional[int] = ..., match_expressions: _Optional[_Iterable[_Union[NodeSelectorRequirement, _Mapping]]] = ...) -> None: ...

class TaskAffinityTerm(_message.Message):
    __slots__ = ("selector", "topology_key", "required", "weight")
    class SelectorEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_KEY_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    selector: _containers.ScalarMap[str, str]
    topology_key: str
    required: bool
    weight: int
    def __init__(self, selector: _Optional[_Mapping[str, str]] = ..., topology_key: _Optional[str] = ..., required: _Optional[bool] = ..., weight: _Optional[int] = ...) -> None: ...

class Affinity(_message.Message):
    __slots__ = ("node_required", "node_preferred", "task_affinity", "task_anti_affinity")
    NODE_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    NODE_PREFERRED_FIELD_NUMBER: _ClassVar[int]
    TASK_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    TASK_ANTI_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    node_required: _containers.RepeatedCompositeFieldContainer[NodeSelectorTerm]
    node_preferred: _containers.RepeatedCompositeFieldContainer[PreferredSchedulingTerm]
    task_affinity: _containers.RepeatedCompositeFieldContainer[TaskAffinityTerm]
    task_anti_affinity: _containers.RepeatedCompositeFieldContainer[TaskAffinityTerm]
    def __init__(self, node_required: _Optional[_Iterable[_Union[NodeSelectorTerm, _Mapping]]] = ..., node_preferred: _Optional[_Iterable[_Union[PreferredSchedulingTerm, _Mapping]]] = ..., task_affinity: _Optional[_Iterable[_Union[TaskAffinityTerm, _Mapping]]] = ..., task_anti_affinity: _Optional[_Iterable[_Union[TaskAffinityTerm, _Mapping]]] = ...) -> None: ...

class TopologySpreadConstraint(_message.Message):
    __slots__ = ("max_skew", "topology_key", "when_unsatisfiable", "selector")
    class SelectorEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MAX_SKEW_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_KEY_FIELD_NUMBER: _ClassVar[int]
    WHEN_UNSATISFIABLE_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    max_skew: int
    topology_key: str
    when_unsatisfiable: WhenUnsatisfiable
    selector: _containers.ScalarMap[str, str]
    def __init__(self, max_skew: _Optional[int] = ..., topology_key: _Optional[str] = ..., when_unsatisfiable: _Optional[_Union[WhenUnsatisfiable, str]] = ..., selector: _Optional[_Mapping[str, str]] = ...) -> None: ...

class Device(_message.Message):
    __slots__ = ("id", "type", "model", "memory", "cores", "attributes")
    class AttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    CORES_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    model: str
    memory: str
    cores: int
    attributes: _containers.ScalarMap[str, str]
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., model: _Optional[str] = ..., memory: _Optional[str] = ..., cores: _Optional[int] = ..., attributes: _Optional[_Mapping[str, str]] = ...) -> None: ...

class DeviceRequest(_message.Message):
    __slots__ = ("type", "count", "memory", "cores", "model")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    CORES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    type: str
    count: int
    memory: str
    cores: int
    model: str
    def __init__(self, type: _Optional[str] = ..., count: _Optional[int] = ..., memory: _Optional[str] = ..., cores: _Optional[int] = ..., model: _Optional[str] = ...) -> None: ...

class Node(_message.Message):
    __slots__ = ("name", "allocatable", "labels", "taints", "unschedulable", "usage", "devices", "numa_topology", "mod_revision")
    class AllocatableEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class UsageEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    UNSCHEDULABLE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    NUMA_TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    name: str
    allocatable: _containers.ScalarMap[str, str]
    labels: _containers.ScalarMap[str, str]
    taints: _containers.RepeatedCompositeFieldContainer[Taint]
    unschedulable: bool
    usage: _containers.ScalarMap[str, float]
    devices: _containers.RepeatedCompositeFieldContainer[Device]
    numa_topology: NumaTopology
    mod_revision: int
    def __init__(self, name: _Optional[str] = ..., allocatable: _Optional[_Mapping[str, str]] = ..., labels: _Optional[_Mapping[str, str]] = ..., taints: _Optional[_Iterable[_Union[Taint, _Mapping]]] = ..., unschedulable: _Optional[bool] = ..., usage: _Optional[_Mapping[str, float]] = ..., devices: _Optional[_Iterable[_Union[Device, _Mapping]]] = ..., numa_topology: _Optional[_Union[NumaTopology, _Mapping]] = ..., mod_revision: _Optional[int] = ...) -> None: ...

class NumaCpu(_message.Message):
    __slots__ = ("id", "socket", "core", "holder")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOCKET_FIELD_NUMBER: _ClassVar[int]
    CORE_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    id: int
    socket: int
    core: int
    holder: str
    def __init__(self, id: _Optional[int] = ..., socket: _Optional[int] = ..., core: _Optional[int] = ..., holder: _Optional[str] = ...) -> None: ...

class NumaCell(_message.Message):
    __slots__ = ("id", "cpus")
    ID_FIELD_NUMBER: _ClassVar[int]
    CPUS_FIELD_NUMBER: _ClassVar[int]
    id: int
    cpus: _containers.RepeatedCompositeFieldContainer[NumaCpu]
    def __init__(self, id: _Optional[int] = ..., cpus: _Optional[_Iterable[_Union[NumaCpu, _Mapping]]] = ...) -> None: ...

class NumaTopology(_message.Message):
    __slots__ = ("topology_manager_policy", "cpu_manager_policy", "cells", "reserved_cpu")
    TOPOLOGY_MANAGER_POLICY_FIELD_NUMBER: _ClassVar[int]
    CPU_MANAGER_POLICY_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    RESERVED_CPU_FIELD_NUMBER: _ClassVar[int]
    topology_manager_policy: str
    cpu_manager_policy: str
    cells: _containers.RepeatedCompositeFieldContainer[NumaCell]
    reserved_cpu: str
    def __init__(self, topology_manager_policy: _Optional[str] = ..., cpu_manager_policy: _Optional[str] = ..., cells: _Optional[_Iterable[_Union[NumaCell, _Mapping]]] = ..., reserved_cpu: _Optional[str] = ...) -> None: ...

class NodeGroupAffinity(_message.Message):
    __slots__ = ("required", "preferred")
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_FIELD_NUMBER: _ClassVar[int]
    required: _containers.RepeatedScalarFieldContainer[str]
    preferred: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, required: _Optional[_Iterable[str]] = ..., preferred: _Optional[_Iterable[str]] = ...) -> None: ...

class QueueStatus(_message.Message):
    __slots__ = ("allocated", "deserved", "share", "overused", "as_of_revision")
    class AllocatedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class DeservedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ALLOCATED_FIELD_NUMBER: _ClassVar[int]
    DESERVED_FIELD_NUMBER: _ClassVar[int]
    SHARE_FIELD_NUMBER: _ClassVar[int]
    OVERUSED_FIELD_NUMBER: _ClassVar[int]
    AS_OF_REVISION_FIELD_NUMBER: _ClassVar[int]
    allocated: _containers.ScalarMap[str, str]
    deserved: _containers.ScalarMap[str, str]
    share: str
    overused: bool
    as_of_revision: int
    def __init__(self, allocated: _Optional[_Mapping[str, str]] = ..., deserved: _Optional[_Mapping[str, str]] = ..., share: _Optional[str] = ..., overused: _Optional[bool] = ..., as_of_revision: _Optional[int] = ...) -> None: ...

class Queue(_message.Message):
    __slots__ = ("name", "parent", "weight", "capability", "deserved", "guarantee", "priority", "state", "reclaimable", "node_group_affinity", "node_group_anti_affinity", "labels", "annotations", "status", "mod_revision")
    class CapabilityEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class DeservedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class GuaranteeEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class AnnotationsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    CAPABILITY_FIELD_NUMBER: _ClassVar[int]
    DESERVED_FIELD_NUMBER: _ClassVar[int]
    GUARANTEE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RECLAIMABLE_FIELD_NUMBER: _ClassVar[int]
    NODE_GROUP_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    NODE_GROUP_ANTI_AFFINITY_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    ANNOTATIONS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    name: str
    parent: str
    weight: int
    capability: _containers.ScalarMap[str, str]
    deserved: _containers.ScalarMap[str, str]
    guarantee: _containers.ScalarMap[str, str]
    priority: int
    state: QueueState
    reclaimable: bool
    node_group_affinity: NodeGroupAffinity
    node_group_anti_affinity: NodeGroupAffinity
    labels: _containers.ScalarMap[str, str]
    annotations: _containers.ScalarMap[str, str]
    status: QueueStatus
    mod_revision: int
    def __init__(self, name: _Optional[str] = ..., parent: _Optional[str] = ..., weight: _Optional[int] = ..., capability: _Optional[_Mapping[str, str]] = ..., deserved: _Optional[_Mapping[str, str]] = ..., guarantee: _Optional[_Mapping[str, str]] = ..., priority: _Optional[int] = ..., state: _Optional[_Union[QueueState, str]] = ..., reclaimable: _Optional[bool] = ..., node_group_affinity: _Optional[_Union[NodeGroupAffinity, _Mapping]] = ..., node_group_anti_affinity: _Optional[_Union[NodeGroupAffinity, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., annotations: _Optional[_Mapping[str, str]] = ..., status: _Optional[_Union[QueueStatus, _Mapping]] = ..., mod_revision: _Optional[int] = ...) -> None: ...

class NetworkTopology(_message.Message):
    __slots__ = ("mode", "highest_tier_allowed")
    MODE_FIELD_NUMBER: _ClassVar[int]
    HIGHEST_TIER_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    mode: NetworkTopologyMode
    highest_tier_allowed: int
    def __init__(self, mode: _Optional[_Union[NetworkTopologyMode, str]] = ..., highest_tier_allowed: _Optional[int] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("name", "namespace", "queue", "priority_class", "priority", "min_available", "min_available_by_role", "min_resources", "phase", "created_at", "labels", "annotations", "network_topology", "mod_revision")
    class MinAvailableByRoleEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class MinResourcesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class AnnotationsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    MIN_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    MIN_AVAILABLE_BY_ROLE_FIELD_NUMBER: _ClassVar[int]
    MIN_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    ANNOTATIONS_FIELD_NUMBER: _ClassVar[int]
    NETWORK_TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    name: str
    namespace: str
    queue: str
    priority_class: str
    priority: int
    min_available: int
    min_available_by_role: _containers.ScalarMap[str, int]
    min_resources: _containers.ScalarMap[str, str]
    phase: JobPhase
    created_at: _timestamp_pb2.Timestamp
    labels: _containers.ScalarMap[str, str]
    annotations: _containers.ScalarMap[str, str]
    network_topology: NetworkTopology
    mod_revision: int
    def __init__(self, name: _Optional[str] = ..., namespace: _Optional[str] = ..., queue: _Optional[str] = ..., priority_class: _Optional[str] = ..., priority: _Optional[int] = ..., min_available: _Optional[int] = ..., min_available_by_role: _Optional[_Mapping[str, int]] = ..., min_resources: _Optional[_Mapping[str, str]] = ..., phase: _Optional[_Union[JobPhase, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., annotations: _Optional[_Mapping[str, str]] = ..., network_topology: _Optional[_Union[NetworkTopology, _Mapping]] = ..., mod_revision: _Optional[int] = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("name", "namespace", "job", "role", "resources", "status", "node", "priority_class", "priority", "started_at", "node_selector", "tolerations", "affinity", "topology_spread", "ports", "devices", "labels", "annotations", "preemptable", "device_ids", "guaranteed", "mod_revision")
    class ResourcesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class NodeSelectorEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class AnnotationsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_CLASS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    NODE_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    TOLERATIONS_FIELD_NUMBER: _ClassVar[int]
    AFFINITY_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_SPREAD_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    ANNOTATIONS_FIELD_NUMBER: _ClassVar[int]
    PREEMPTABLE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_IDS_FIELD_NUMBER: _ClassVar[int]
    GUARANTEED_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    name: str
    namespace: str
    job: str
    role: str
    resources: _containers.ScalarMap[str, str]
    status: TaskStatus
    node: str
    priority_class: str
    priority: int
    started_at: _timestamp_pb2.Timestamp
    node_selector: _containers.ScalarMap[str, str]
    tolerations: _containers.RepeatedCompositeFieldContainer[Toleration]
    affinity: Affinity
    topology_spread: _containers.RepeatedCompositeFieldContainer[TopologySpreadConstraint]
    ports: _containers.RepeatedScalarFieldContainer[int]
    devices: _containers.RepeatedCompositeFieldContainer[DeviceRequest]
    labels: _containers.ScalarMap[str, str]
    annotations: _containers.ScalarMap[str, str]
    preemptable: bool
    device_ids: _containers.RepeatedScalarFieldContainer[str]
    guaranteed: bool
    mod_revision: int
    def __init__(self, name: _Optional[str] = ..., namespace: _Optional[str] = ..., job: _Optional[str] = ..., role: _Optional[str] = ..., resources: _Optional[_Mapping[str, str]] = ..., status: _Optional[_Union[TaskStatus, str]] = ..., node: _Optional[str] = ..., priority_class: _Optional[str] = ..., priority: _Optional[int] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., node_selector: _Optional[_Mapping[str, str]] = ..., tolerations: _Optional[_Iterable[_Union[Toleration, _Mapping]]] = ..., affinity: _Optional[_Union[Affinity, _Mapping]] = ..., topology_spread: _Optional[_Iterable[_Union[TopologySpreadConstraint, _Mapping]]] = ..., ports: _Optional[_Iterable[int]] = ..., devices: _Optional[_Iterable[_Union[DeviceRequest, _Mapping]]] = ..., labels: _Optional[_Mapping[str, str]] = ..., annotations: _Optional[_Mapping[str, str]] = ..., preemptable: _Optional[bool] = ..., device_ids: _Optional[_Iterable[str]] = ..., guaranteed: _Optional[bool] = ..., mod_revision: _Optional[int] = ...) -> None: ...

class PriorityClass(_message.Message):
    __slots__ = ("name", "value", "mod_revision")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: int
    mod_revision: int
    def __init__(self, name: _Optional[str] = ..., value: _Optional[int] = ..., mod_revision: _Optional[int] = ...) -> None: ...

class NamespaceQuota(_message.Message):
    __slots__ = ("namespace", "hard", "mod_revision")
    class HardEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    HARD_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    hard: _containers.ScalarMap[str, str]
    mod_revision: int
    def __init__(self, namespace: _Optional[str] = ..., hard: _Optional[_Mapping[str, str]] = ..., mod_revision: _Optional[int] = ...) -> None: ...

class DisruptionBudget(_message.Message):
    __slots__ = ("name", "namespace", "selector", "min_available", "max_unavailable", "mod_revision")
    class SelectorEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    MIN_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    MAX_UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    name: str
    namespace: str
    selector: _containers.ScalarMap[str, str]
    min_available: str
    max_unavailable: str
    mod_revision: int
    def __init__(self, name: _Optional[str] = ..., namespace: _Optional[str] = ..., selector: _Optional[_Mapping[str, str]] = ..., min_available: _Optional[str] = ..., max_unavailable: _Optional[str] = ..., mod_revision: _Optional[int] = ...) -> None: ...

class HyperNode(_message.Message):
    __slots__ = ("name", "tier", "members", "mod_revision")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    MOD_REVISION_FIELD_NUMBER: _ClassVar[int]
    name: str
    tier: int
    members: _containers.RepeatedScalarFieldContainer[str]
    mod_revision: int
    def __init__(self, name: _Optional[str] = ..., tier: _Optional[int] = ..., members: _Optional[_Iterable[str]] = ..., mod_revision: _Optional[int] = ...) -> None: ...

class ObjectRef(_message.Message):
    __slots__ = ("kind", "namespace", "name")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    kind: ObjectKind
    namespace: str
    name: str
    def __init__(self, kind: _Optional[_Union[ObjectKind, str]] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class Delta(_message.Message):
    __slots__ = ("upsert_node", "upsert_queue", "upsert_job", "upsert_task", "upsert_priority_class", "upsert_namespace_quota", "upsert_disruption_budget", "upsert_hyper_node", "delete")
    UPSERT_NODE_FIELD_NUMBER: _ClassVar[int]
    UPSERT_QUEUE_FIELD_NUMBER: _ClassVar[int]
    UPSERT_JOB_FIELD_NUMBER: _ClassVar[int]
    UPSERT_TASK_FIELD_NUMBER: _ClassVar[int]
    UPSERT_PRIORITY_CLASS_FIELD_NUMBER: _ClassVar[int]
    UPSERT_NAMESPACE_QUOTA_FIELD_NUMBER: _ClassVar[int]
    UPSERT_DISRUPTION_BUDGET_FIELD_NUMBER: _ClassVar[int]
    UPSERT_HYPER_NODE_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    upsert_node: Node
    upsert_queue: Queue
    upsert_job: Job
    upsert_task: Task
    upsert_priority_class: PriorityClass
    upsert_namespace_quota: NamespaceQuota
    upsert_disruption_budget: DisruptionBudget
    upsert_hyper_node: HyperNode
    delete: ObjectRef
    def __init__(self, upsert_node: _Optional[_Union[Node, _Mapping]] = ..., upsert_queue: _Optional[_Union[Queue, _Mapping]] = ..., upsert_job: _Optional[_Union[Job, _Mapping]] = ..., upsert_task: _Optional[_Union[Task, _Mapping]] = ..., upsert_priority_class: _Optional[_Union[PriorityClass, _Mapping]] = ..., upsert_namespace_quota: _Optional[_Union[NamespaceQuota, _Mapping]] = ..., upsert_disruption_budget: _Optional[_Union[DisruptionBudget, _Mapping]] = ..., upsert_hyper_node: _Optional[_Union[HyperNode, _Mapping]] = ..., delete: _Optional[_Union[ObjectRef, _Mapping]] = ...) -> None: ...

class DeltaBatch(_message.Message):
    __slots__ = ("sequence", "deltas", "replace_all")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    DELTAS_FIELD_NUMBER: _ClassVar[int]
    REPLACE_ALL_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    deltas: _containers.RepeatedCompositeFieldContainer[Delta]
    replace_all: bool
    def __init__(self, sequence: _Optional[int] = ..., deltas: _Optional[_Iterable[_Union[Delta, _Mapping]]] = ..., replace_all: _Optional[bool] = ...) -> None: ...
