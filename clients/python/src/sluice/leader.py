"""Following the leader of a replicated server (``sluiced --raft-peers``).

A follower refuses a write with ``UNAVAILABLE`` and an ErrorInfo of reason ``NOT_LEADER``
whose metadata ``leader`` is the leader's gRPC address. A refused call did nothing, so
``LeaderChannel`` sends it again to that leader, and later calls and streams go there too.
A member that cannot be reached, or that answers ``UNAVAILABLE`` with reason
``STORE_UNAVAILABLE`` (it knows no leader) or ``STALE_READ_REFUSED`` (it is too far behind),
makes later calls try the next member; that call's error is raised, since a call that failed
in transport may have taken effect.

Stale reads carry the client's revision floor as ``min_revision`` (see ``sluice.ryw``), so
a client reads its own writes on any member.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Optional

import grpc

from sluice.errors import error_info
from sluice.ryw import RevisionFloor

__all__ = [
    "MAX_LEADER_HOPS",
    "METADATA_LEADER",
    "REASON_NOT_LEADER",
    "LeaderChannel",
    "leader_of",
]

#: ErrorInfo reason of a write sent to a member that does not lead.
REASON_NOT_LEADER = "NOT_LEADER"
#: ErrorInfo metadata key of a ``NOT_LEADER`` error holding the leader's gRPC address.
METADATA_LEADER = "leader"
#: How often one call follows a ``NOT_LEADER`` answer to another member.
MAX_LEADER_HOPS = 3

# Reasons of a member that cannot serve the call, whichever call it is: later calls go to
# the next member.
_TRY_ANOTHER = frozenset({"STORE_UNAVAILABLE", "STALE_READ_REFUSED"})


def _code(err: BaseException) -> Optional[grpc.StatusCode]:
    code = getattr(err, "code", None)
    return code() if callable(code) else None


def leader_of(err: BaseException) -> Optional[str]:
    """The leader's address that a ``NOT_LEADER`` error (``UNAVAILABLE``) names; None for
    any other error, and for a ``NOT_LEADER`` error that names no leader."""
    if _code(err) != grpc.StatusCode.UNAVAILABLE:
        return None
    info = error_info(err)
    if info is None or info.reason != REASON_NOT_LEADER:
        return None
    return info.metadata.get(METADATA_LEADER) or None


class LeaderChannel(grpc.Channel):
    """A ``grpc.Channel`` over the members of a replicated server that follows its leader.

    ``members`` is ``target`` followed by ``endpoints``, without repeats; calls go to one
    member at a time, at first ``target``. ``open_channel(address)`` opens the channel to a
    member (or to a leader that is not in the list) the first time calls go there, so every
    channel has the same credentials and options. The rules:

    - A unary-unary call refused with ``NOT_LEADER`` naming a leader is sent again to that
      leader, at most ``MAX_LEADER_HOPS`` times, within the call's first timeout; later
      calls go to the leader too. ``NOT_LEADER`` without a leader is raised as it is.
    - ``UNAVAILABLE`` without a Sluice ErrorInfo (the member cannot be reached), or with
      reason ``STORE_UNAVAILABLE`` or ``STALE_READ_REFUSED``: later calls go to the next
      member (round robin) when there are two or more; the error is raised.
    - Streams, client-streaming calls and futures are never sent again (their request may
      be consumed, or the caller holds the call): their errors move later calls by the same
      rules and reach the caller, who calls again.
    - When several threads see the same failure, the first one moves the calls; the others
      follow it rather than move again.
    - Read-your-writes: every successful unary-unary call whose request names a
      ``cluster`` and whose response has a ``revision`` raises that cluster's revision
      floor (``revision_floor``). A unary request (unary-unary or unary-stream) with a stale
      ``read`` (``READ_CONSISTENCY_STALE``) and no ``min_revision`` is sent as a copy whose
      ``read.min_revision`` is the floor, so whichever member answers has applied the
      client's writes and what it read before. The caller's message is never changed;
      linearizable reads are left alone.

    ``close()`` closes every channel opened.
    """

    def __init__(
        self, target: str, endpoints: Iterable[str], open_channel: Callable[[str], grpc.Channel]
    ) -> None:
        if isinstance(endpoints, str):
            raise TypeError("endpoints must be a sequence of addresses, not a string")
        self._open = open_channel
        self._lock = threading.Lock()
        self._members = tuple(dict.fromkeys([target, *endpoints]))
        self._target = target
        self._current = open_channel(target)
        self._channels: dict[str, grpc.Channel] = {target: self._current}
        self._closed = False
        self._floor = RevisionFloor()

    @property
    def members(self) -> tuple[str, ...]:
        """The members' addresses: the target, then the other endpoints."""
        return self._members

    @property
    def target(self) -> str:
        """The address calls go to now (a member, or the leader a member named)."""
        with self._lock:
            return self._target

    def revision_floor(self, cluster: str) -> int:
        """The highest revision of ``cluster`` this channel's calls saw (0 when none): the
        ``min_revision`` its stale reads carry."""
        return self._floor.get(cluster)

    def current(self) -> grpc.Channel:
        """The channel calls go to now."""
        with self._lock:
            return self._current

    def observe(self, channel: grpc.Channel, err: BaseException) -> bool:
        """Looks at the error of a call made on ``channel`` and moves later calls as the
        rules say. Returns True when the call may be sent again, to ``current()``: the
        member refused it with ``NOT_LEADER`` and named a leader."""
        leader = leader_of(err)
        if leader is not None:
            return self._move_to(channel, leader)
        if _code(err) != grpc.StatusCode.UNAVAILABLE or len(self._members) < 2:
            return False
        info = error_info(err)
        if info is not None and info.reason not in _TRY_ANOTHER:
            return False
        with self._lock:
            if self._target in self._members:
                nxt = self._members[(self._members.index(self._target) + 1) % len(self._members)]
            else:  # a leader outside the list
                nxt = self._members[0]
        self._move_to(channel, nxt)
        return False

    def _move_to(self, came_from: grpc.Channel, target: str) -> bool:
        """Makes ``target`` the current member, unless another call moved away from
        ``came_from`` already (then calls follow that move). Reports whether calls now go
        to ``target`` or to where the other call moved them."""
        with self._lock:
            if self._closed:
                return False
            if self._target == target or self._current is not came_from:
                return True
            channel = self._channels.get(target)
            if channel is None:
                try:
                    channel = self._open(target)
                except Exception:  # an address grpc refuses: stay where we are
                    return False
                self._channels[target] = channel
            self._current, self._target = channel, target
            return True

    def close(self) -> None:
        """Closes every channel opened."""
        with self._lock:
            self._closed = True
            channels = list(self._channels.values())
        for channel in channels:
            channel.close()

    def __enter__(self) -> LeaderChannel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def subscribe(self, callback: Callable[[grpc.ChannelConnectivity], None], try_to_connect: bool = False) -> None:
        """Subscribes to the connectivity of the channel calls go to now."""
        self.current().subscribe(callback, try_to_connect)

    def unsubscribe(self, callback: Callable[[grpc.ChannelConnectivity], None]) -> None:
        """Unsubscribes from every channel opened."""
        with self._lock:
            channels = list(self._channels.values())
        for channel in channels:
            channel.unsubscribe(callback)

    def unary_unary(self, method: str, request_serializer: Any = None, response_deserializer: Any = None,
                    _registered_method: bool = False) -> grpc.UnaryUnaryMultiCallable:
        """A unary-unary multi-callable that follows the leader (sends refused calls again)."""
        return _UnaryUnary(self, "unary_unary", method, request_serializer, response_deserializer, _registered_method)

    def unary_stream(self, method: str, request_serializer: Any = None, response_deserializer: Any = None,
                     _registered_method: bool = False) -> grpc.UnaryStreamMultiCallable:
        """A unary-stream multi-callable on the current member whose errors move later calls."""
        return _UnaryStream(self, "unary_stream", method, request_serializer, response_deserializer, _registered_method)

    def stream_unary(self, method: str, request_serializer: Any = None, response_deserializer: Any = None,
                     _registered_method: bool = False) -> grpc.StreamUnaryMultiCallable:
        """A stream-unary multi-callable on the current member whose errors move later calls."""
        return _StreamUnary(self, "stream_unary", method, request_serializer, response_deserializer, _registered_method)

    def stream_stream(self, method: str, request_serializer: Any = None, response_deserializer: Any = None,
                      _registered_method: bool = False) -> grpc.StreamStreamMultiCallable:
        """A stream-stream multi-callable on the current member whose errors move later calls."""
        return _StreamStream(self, "stream_stream", method, request_serializer, response_deserializer,
                             _registered_method)


class _Method:
    """One method of a LeaderChannel: the multi-callable of each member's channel, made on
    first use."""

    def __init__(self, leader: LeaderChannel, kind: str, method: str, *args: Any) -> None:
        self._leader = leader
        self._kind = kind
        self._method = method
        self._args = args
        self._calls: dict[grpc.Channel, Any] = {}

    def _on(self, channel: grpc.Channel) -> Any:
        call = self._calls.get(channel)
        if call is None:
            call = self._calls.setdefault(channel, getattr(channel, self._kind)(self._method, *self._args))
        return call

    def _once(self, how: str, request: Any, *args: Any, **kwargs: Any) -> Any:
        """Makes the call on the current member; its error moves later calls."""
        channel = self._leader.current()
        try:
            return getattr(self._on(channel), how)(request, *args, **kwargs)
        except grpc.RpcError as err:
            self._leader.observe(channel, err)
            raise

    def _future(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        """Starts the call on the current member; its error, when it ends, moves later calls."""
        channel = self._leader.current()
        future = self._on(channel).future(request, *args, **kwargs)

        def done(f: Any) -> None:
            if not f.cancelled() and f.code() != grpc.StatusCode.OK:
                self._leader.observe(channel, f)

        future.add_done_callback(done)
        return future

    def _stream(self, request: Any, *args: Any, **kwargs: Any) -> _ObservedStream:
        channel = self._leader.current()
        return _ObservedStream(self._on(channel)(request, *args, **kwargs), self._leader, channel)


class _UnaryUnary(_Method, grpc.UnaryUnaryMultiCallable):
    def _invoke(self, how: str, request: Any, timeout: Optional[float], *args: Any, **kwargs: Any) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        hops = 0
        floor = self._leader._floor
        request = floor.apply(request)
        while True:
            channel = self._leader.current()
            try:
                result = getattr(self._on(channel), how)(request, timeout, *args, **kwargs)
                floor.note(request, result[0] if how == "with_call" else result)
                return result
            except grpc.RpcError as err:
                if not self._leader.observe(channel, err) or hops >= MAX_LEADER_HOPS:
                    raise
                if deadline is not None:
                    timeout = deadline - time.monotonic()
                    if timeout <= 0:
                        raise
                hops += 1

    def __call__(self, request: Any, timeout: Optional[float] = None, *args: Any, **kwargs: Any) -> Any:
        return self._invoke("__call__", request, timeout, *args, **kwargs)

    def with_call(self, request: Any, timeout: Optional[float] = None, *args: Any, **kwargs: Any) -> Any:
        return self._invoke("with_call", request, timeout, *args, **kwargs)

    def future(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        floor = self._leader._floor
        request = floor.apply(request)
        future = self._future(request, *args, **kwargs)

        def note(f: Any) -> None:
            if not f.cancelled() and f.code() == grpc.StatusCode.OK:
                floor.note(request, f.result())

        future.add_done_callback(note)
        return future


class _StreamUnary(_Method, grpc.StreamUnaryMultiCallable):
    def __call__(self, request_iterator: Any, *args: Any, **kwargs: Any) -> Any:
        return self._once("__call__", request_iterator, *args, **kwargs)

    def with_call(self, request_iterator: Any, *args: Any, **kwargs: Any) -> Any:
        return self._once("with_call", request_iterator, *args, **kwargs)

    def future(self, request_iterator: Any, *args: Any, **kwargs: Any) -> Any:
        return self._future(request_iterator, *args, **kwargs)


class _UnaryStream(_Method, grpc.UnaryStreamMultiCallable):
    def __call__(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        return self._stream(self._leader._floor.apply(request), *args, **kwargs)


class _StreamStream(_Method, grpc.StreamStreamMultiCallable):
    def __call__(self, request_iterator: Any, *args: Any, **kwargs: Any) -> Any:
        return self._stream(request_iterator, *args, **kwargs)


class _ObservedStream:
    """A stream's responses, as grpc returns them (a Call too: ``cancel()``, ``code()``,
    ...), whose error moves later calls before it reaches the caller."""

    def __init__(self, call: Any, leader: LeaderChannel, channel: grpc.Channel) -> None:
        self._call = call
        self._leader = leader
        self._channel = channel

    def __iter__(self) -> _ObservedStream:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._call)
        except grpc.RpcError as err:
            self._leader.observe(self._channel, err)
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)
