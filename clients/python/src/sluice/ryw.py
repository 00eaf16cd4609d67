"""Read-your-writes for stale reads: a client's revision floor, per cluster.

A stale read (``read=ReadOptions(consistency=READ_CONSISTENCY_STALE)``) is answered by
whichever member it reaches, from that member's own state, which may be behind. A member
asked for ``min_revision`` answers only once it applied that revision (or refuses with
``UNAVAILABLE``, reason ``STALE_READ_REFUSED``). ``RevisionFloor`` remembers the highest
revision a client's calls saw for each cluster (a write's acknowledgement, or a read's
answer) and sends it as ``min_revision`` with the client's later stale reads, so that the
client reads its own writes and never goes back in time. Linearizable reads need no floor.

Messages are looked at by reflection: a request's string field ``cluster``, a response's
uint64 field ``revision`` and a request's ``read`` field of type ``sluice.v1.ReadOptions``.
"""

from __future__ import annotations

import threading
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from sluice.v1 import reads_pb2

_READ_OPTIONS = reads_pb2.ReadOptions.DESCRIPTOR.full_name


def _field(message: Any, name: str, kind: int) -> Any:
    """The value of ``message``'s field ``name`` when it has one of type ``kind``, else None."""
    fields = getattr(getattr(message, "DESCRIPTOR", None), "fields_by_name", None)
    fd = fields.get(name) if fields is not None else None
    if fd is None or fd.type != kind or fd.is_repeated:
        return None
    return getattr(message, name)


class RevisionFloor:
    """The highest revision seen per cluster; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._floors: dict[str, int] = {}

    def get(self, cluster: str) -> int:
        """The cluster's floor; 0 when no call saw a revision of it."""
        with self._lock:
            return self._floors.get(cluster, 0)

    def note(self, request: Any, response: Any) -> None:
        """Raises the floor of the request's cluster to the response's ``revision``."""
        cluster = _field(request, "cluster", FieldDescriptor.TYPE_STRING)
        revision = _field(response, "revision", FieldDescriptor.TYPE_UINT64)
        if not cluster or not revision:
            return
        with self._lock:
            if revision > self._floors.get(cluster, 0):
                self._floors[cluster] = revision

    def apply(self, request: Any) -> Any:
        """``request``, or a copy with ``read.min_revision`` set to its cluster's floor when
        it is a stale read that left ``min_revision`` unset. The request is never changed."""
        fields = getattr(getattr(request, "DESCRIPTOR", None), "fields_by_name", None)
        fd = fields.get("read") if fields is not None else None
        if fd is None or fd.message_type is None or fd.message_type.full_name != _READ_OPTIONS:
            return request
        if not request.HasField("read"):
            return request
        read = request.read
        if read.consistency != reads_pb2.READ_CONSISTENCY_STALE or read.min_revision != 0:
            return request
        floor = self.get(_field(request, "cluster", FieldDescriptor.TYPE_STRING) or "")
        if floor == 0:
            return request
        copy = type(request)()
        copy.CopyFrom(request)
        copy.read.min_revision = floor
        return copy
