"""The reason of a failed call: the ``google.rpc.ErrorInfo`` detail every Sluice error carries.

The server attaches a ``google.rpc.Status`` to each error status with an ``ErrorInfo`` of
domain ``sluice.sched`` whose reason is a ``sluice.v1.ErrorReason`` name without its
``ERROR_REASON_`` prefix, for example ``"PLAN_EXPIRED"``. Programs switch on the reason,
never on the message. The status is read with grpcio-status (``rpc_status.from_call``).
"""

from __future__ import annotations

from typing import Optional

from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2
from grpc_status import rpc_status

__all__ = ["ERROR_DOMAIN", "error_info", "error_reason"]

#: Domain of the ErrorInfo detail of Sluice's errors.
ERROR_DOMAIN = "sluice.sched"


def error_info(err: BaseException) -> Optional[error_details_pb2.ErrorInfo]:
    """The ``google.rpc.ErrorInfo`` of domain ``sluice.sched`` that a failed call's error
    (a ``grpc.RpcError``) carries: ``.reason``, ``.domain`` and ``.metadata`` (for example
    the leader's address of a ``NOT_LEADER`` error). None when the error has none (not an
    RPC error, or not from a Sluice server)."""
    if not callable(getattr(err, "trailing_metadata", None)) or not callable(getattr(err, "code", None)):
        return None
    try:
        status = rpc_status.from_call(err)
    except (DecodeError, ValueError):  # details that do not parse or contradict the status
        return None
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            if info.domain == ERROR_DOMAIN:
                return info
    return None


def error_reason(err: BaseException) -> Optional[str]:
    """The reason of a failed call: a ``sluice.v1.ErrorReason`` name without its prefix,
    such as ``"PLAN_DISCARDED"`` or ``"PLAN_EXPIRED"``; None when the error carries none.

    ``sluice.v1.errors_pb2.ErrorReason.Value("ERROR_REASON_" + reason)`` gives the enum's
    number. A newer server may send a reason this client does not list yet: treat it by the
    status code (``err.code()``)."""
    info = error_info(err)
    return info.reason if info is not None and info.reason else None
