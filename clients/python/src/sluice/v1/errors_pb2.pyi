from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_FIELD: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_REFERENCE: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_CONFIG: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_FAILED_PRECONDITION: _ClassVar[ErrorReason]
    ERROR_REASON_RESYNC_REQUIRED: _ClassVar[ErrorReason]
    ERROR_REASON_SHUTTING_DOWN: _ClassVar[ErrorReason]
    ERROR_REASON_INTERNAL: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_LEADER: _ClassVar[ErrorReason]
    ERROR_REASON_STORE_UNAVAILABLE: _ClassVar[ErrorReason]
    ERROR_REASON_UNAUTHENTICATED: _ClassVar[ErrorReason]
    ERROR_REASON_PERMISSION_DENIED: _ClassVar[ErrorReason]
    ERROR_REASON_WATCH_EXISTS: _ClassVar[ErrorReason]
    ERROR_REASON_TAKEN_OVER: _ClassVar[ErrorReason]
    ERROR_REASON_PLAN_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_PLAN_COMMITTED: _ClassVar[ErrorReason]
    ERROR_REASON_PLAN_DISCARDED: _ClassVar[ErrorReason]
    ERROR_REASON_PLAN_EXPIRED: _ClassVar[ErrorReason]
    ERROR_REASON_PLAN_DRY_RUN: _ClassVar[ErrorReason]
    ERROR_REASON_CLUSTER_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_CONFIG_ETAG_MISMATCH: _ClassVar[ErrorReason]
    ERROR_REASON_RATE_LIMITED: _ClassVar[ErrorReason]
    ERROR_REASON_CANCELLED: _ClassVar[ErrorReason]
    ERROR_REASON_DEADLINE_EXCEEDED: _ClassVar[ErrorReason]
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_INVALID_FIELD: ErrorReason
ERROR_REASON_INVALID_REFERENCE: ErrorReason
ERROR_REASON_INVALID_CONFIG: ErrorReason
ERROR_REASON_NOT_FOUND: ErrorReason
ERROR_REASON_FAILED_PRECONDITION: ErrorReason
ERROR_REASON_RESYNC_REQUIRED: ErrorReason
ERROR_REASON_SHUTTING_DOWN: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason
ERROR_REASON_NOT_LEADER: ErrorReason
ERROR_REASON_STORE_UNAVAILABLE: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_PERMISSION_DENIED: ErrorReason
ERROR_REASON_WATCH_EXISTS: ErrorReason
ERROR_REASON_TAKEN_OVER: ErrorReason
ERROR_REASON_PLAN_NOT_FOUND: ErrorReason
ERROR_REASON_PLAN_COMMITTED: ErrorReason
ERROR_REASON_PLAN_DISCARDED: ErrorReason
ERROR_REASON_PLAN_EXPIRED: ErrorReason
ERROR_REASON_PLAN_DRY_RUN: ErrorReason
ERROR_REASON_CLUSTER_NOT_FOUND: ErrorReason
ERROR_REASON_CONFIG_ETAG_MISMATCH: ErrorReason
ERROR_REASON_RATE_LIMITED: ErrorReason
ERROR_REASON_CANCELLED: ErrorReason
ERROR_REASON_DEADLINE_EXCEEDED: ErrorReason
