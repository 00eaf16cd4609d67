"""The reason of a failed call: the ``google.rpc.ErrorInfo`` detail every Sluice error carries.

The server attaches a ``google.rpc.Status`` to each error status (gRPC's
``grpc-status-details-bin`` trailer) with an ``ErrorInfo`` of domain ``sluice.sched`` whose
reason is a ``sluice.v1.ErrorReason`` name without its ``ERROR_REASON_`` prefix, for example
``"PLAN_EXPIRED"``. Programs switch on the reason, never on the message.

The two ``google.rpc`` messages are declared here, in a descriptor pool of this module's
own, rather than taken from googleapis-common-protos: that package does not support the
protobuf 7 runtime the generated code needs, and a private pool cannot clash with it when a
program uses both.
"""

from __future__ import annotations

from typing import Optional

from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

__all__ = ["ERROR_DOMAIN", "error_info", "error_reason"]

#: Domain of the ErrorInfo detail of Sluice's errors.
ERROR_DOMAIN = "sluice.sched"

_STATUS_TRAILER = "grpc-status-details-bin"
_ERROR_INFO_TYPE = "google.rpc.ErrorInfo"


def _messages() -> tuple[type[message.Message], type[message.Message]]:
    """Declares google.rpc.Status (with a wire-compatible google.protobuf.Any of its own) and
    google.rpc.ErrorInfo, as in googleapis' google/rpc/status.proto and error_details.proto."""
    F = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="sluice/_google_rpc.proto", package="google.rpc", syntax="proto3")

    def field(m, name, number, kind, label=F.LABEL_OPTIONAL, type_name=None):
        fd = m.field.add(name=name, number=number, type=kind, label=label)
        if type_name:
            fd.type_name = type_name

    any_ = f.message_type.add(name="Any")
    field(any_, "type_url", 1, F.TYPE_STRING)
    field(any_, "value", 2, F.TYPE_BYTES)
    status = f.message_type.add(name="Status")
    field(status, "code", 1, F.TYPE_INT32)
    field(status, "message", 2, F.TYPE_STRING)
    field(status, "details", 3, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".google.rpc.Any")
    info = f.message_type.add(name="ErrorInfo")
    field(info, "reason", 1, F.TYPE_STRING)
    field(info, "domain", 2, F.TYPE_STRING)
    entry = info.nested_type.add(name="MetadataEntry")
    entry.options.map_entry = True
    field(entry, "key", 1, F.TYPE_STRING)
    field(entry, "value", 2, F.TYPE_STRING)
    field(info, "metadata", 3, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".google.rpc.ErrorInfo.MetadataEntry")

    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.Status")),
        message_factory.GetMessageClass(pool.FindMessageTypeByName(_ERROR_INFO_TYPE)),
    )


_Status, _ErrorInfo = _messages()


def error_info(err: BaseException) -> Optional[message.Message]:
    """The ``google.rpc.ErrorInfo`` of domain ``sluice.sched`` that a failed call's error
    (a ``grpc.RpcError``) carries: ``.reason``, ``.domain`` and ``.metadata`` (for example
    the leader's address of a ``NOT_LEADER`` error). None when the error has none (not an
    RPC error, or not from a Sluice server)."""
    trailing = getattr(err, "trailing_metadata", None)
    if not callable(trailing):
        return None
    try:
        md = trailing() or ()
    except Exception:  # an error object without trailers to give
        return None
    for key, value in md:
        if key != _STATUS_TRAILER or not isinstance(value, bytes):
            continue
        status = _Status()
        try:
            status.ParseFromString(value)
        except message.DecodeError:
            return None
        for detail in status.details:
            if detail.type_url.rsplit("/", 1)[-1] != _ERROR_INFO_TYPE:
                continue
            info = _ErrorInfo()
            try:
                info.ParseFromString(detail.value)
            except message.DecodeError:
                continue
            if info.domain == ERROR_DOMAIN:
                return info
    return None


def error_reason(err: BaseException) -> Optional[str]:
    """The reason of a failed call: a ``sluice.v1.ErrorReason`` name without its prefix,
    such as ``"PLAN_DISCARDED"`` or ``"PLAN_EXPIRED"``; None when the error carries none.

    ``sluice.v1.errors_pb2.ErrorReason.Value("ERROR_REASON_" + reason)`` gives the enum's number. A
    newer server may send a reason this client does not list yet: treat it by the status
    code (``err.code()``)."""
    info = error_info(err)
    return info.reason if info is not None and info.reason else None

