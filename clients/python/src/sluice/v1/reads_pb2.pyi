import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReadConsistency(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    READ_CONSISTENCY_UNSPECIFIED: _ClassVar[ReadConsistency]
    READ_CONSISTENCY_LINEARIZABLE: _ClassVar[ReadConsistency]
    READ_CONSISTENCY_STALE: _ClassVar[ReadConsistency]
READ_CONSISTENCY_UNSPECIFIED: ReadConsistency
READ_CONSISTENCY_LINEARIZABLE: ReadConsistency
READ_CONSISTENCY_STALE: ReadConsistency

class ReadOptions(_message.Message):
    __slots__ = ("consistency", "max_staleness", "min_revision")
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    MAX_STALENESS_FIELD_NUMBER: _ClassVar[int]
    MIN_REVISION_FIELD_NUMBER: _ClassVar[int]
    consistency: ReadConsistency
    max_staleness: _duration_pb2.Duration
    min_revision: int
    def __init__(self, consistency: _Optional[_Union[ReadConsistency, str]] = ..., max_staleness: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., min_revision: _Optional[int] = ...) -> None: ...
