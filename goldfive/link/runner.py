"""HubLink: the runner's end of ``Hub.Connect`` (what ``Runner(hub=...)`` adds to its sinks).

``emit`` only appends to an :class:`EventBuffer`; one background task owns the connection.
It says ``RunnerHello``, reads ``HubWelcome{stored_through}``, forgets what the hub already
has and sends the rest in batches (a batch closes at ``batch_events`` or ``linger`` seconds
after its first event). Controls that come down are sent on the run's own ControlChannel
(``request``) and each ack goes back up, on the next connection if this one broke first.
``confirmed_sequence`` from the hub lets the buffer forget. When the hub goes away the run is
not affected: events pile up (in memory up to a bound, then on disk), the task reconnects
with capped exponential backoff and resends from what the hub says it stored.

A ``goodbye`` (another runner took this run id over) or a refusal (INVALID_ARGUMENT,
PERMISSION_DENIED, ...) stops the link for good: it is logged once, and ``close`` raises
SinkError naming what the hub did not get, never silently. Here: the link and its
connection loop; what goes up a call is :mod:`goldfive.link.outgoing`, what comes down
:mod:`goldfive.link.controls`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from goldfive.control import ControlChannel
from goldfive.errors import SinkError
from goldfive.link.buffer import DEFAULT_MAX_MEMORY, EventBuffer
from goldfive.link.controls import ControlFeed
from goldfive.link.lane import _Lane
from goldfive.link.mux import HubMux
from goldfive.link.raw import hub_stub
from goldfive.link.outgoing import Outgoing, _Ended, _Stopped, send as _send
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.link.wire import bearer_metadata, hub_addresses

__all__ = ["HubLink", "hub_addresses", "hub_link"]

log = logging.getLogger("goldfive.hub")

#: Status codes that mean "the hub refuses this": retrying would be refused the same way.
_PERMANENT = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
}


class HubLink:
    def __init__(
        self,
        address: str | Sequence[str],
        control: ControlChannel,
        *,
        token: str | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
        max_memory: int = DEFAULT_MAX_MEMORY,
        spill_dir: str | os.PathLike[str] | None = None,
        batch_events: int = 500,
        linger: float | None = None,
        max_backoff: float = 2.0,
        close_timeout: float = 10.0,
        grpc_channel: grpc.aio.Channel | None = None,
        mux: HubMux | None = None,
        shared: bool = False,
    ) -> None:
        #: The hubs to connect to, in order (several hubs sharing one database): after a
        #: broken or refused-for-now connection the link tries the next one.
        self.addresses = hub_addresses(address)
        self._at = 0
        self._channels: dict[str, grpc.aio.Channel] = {}
        #: What goes up: the events the hub has not confirmed, the acks. A batch waits
        #: ``linger`` seconds to fill after its first event: 5 ms on a stream of its own;
        #: none on a shared stream (``mux``), whose frames already wait for other runs' parts.
        self.out = Outgoing(
            EventBuffer(max_memory, spill_dir),
            batch_events=batch_events,
            linger=linger if linger is not None else 0.0 if mux is not None or shared else 0.005,
        )
        #: The run's channel: controls that come down are sent on it, their acks go up.
        self.control = control
        self._controls = ControlFeed(control, self.out.send_ack)
        self._linger_default = linger is None
        self.max_backoff = max_backoff
        self.close_timeout = close_timeout
        #: The last sequence the hub confirmed stored.
        self.confirmed = -1
        #: Connections that got a welcome (1 = never reconnected).
        self.sessions = 0
        #: Why the hub ended the link ("" while it is on).
        self.stopped = ""
        #: Set when the hub ended the link for good (``stopped`` says why).
        self.refused = asyncio.Event()
        #: Set when a hub first welcomed the run (took it: a placed run's hub holds its lock).
        self.welcomed = asyncio.Event()
        self.errors: list[str] = []
        self._metadata = bearer_metadata(token)
        self._token = token
        self._tls_ca = tls_ca
        self._run_id = ""
        self._goal = ""
        self._emitted = -1
        self._confirmed_all = asyncio.Event()
        self._confirmed_all.set()
        self._closed = False
        self._task: asyncio.Task[None] | None = None
        self._channel: grpc.aio.Channel | None = None
        #: A connection shared with other links of this process (not closed by this link).
        self._shared_channel = grpc_channel
        #: A stream shared with other links of this process: this run is one lane of it.
        self._mux = mux
        #: ``shared``: the process's one stream to these hubs (goldfive.link.mux.acquire),
        #: taken when the link first connects and given back when it closes.
        self._shared = shared and mux is None
        self._acquired = False

    @property
    def buffer(self) -> EventBuffer:
        """The run's events the hub has not confirmed yet."""
        return self.out.buffer

    @buffer.setter
    def buffer(self, buffer: EventBuffer) -> None:
        self.out.buffer = buffer

    @property
    def batch_events(self) -> int:
        return self.out.batch_events  # the most events one message carries

    @batch_events.setter
    def batch_events(self, n: int) -> None:
        self.out.batch_events = n

    @property
    def linger(self) -> float:
        return self.out.linger  # seconds a batch waits to fill after its first event

    @linger.setter
    def linger(self, seconds: float) -> None:
        self.out.linger = seconds

    # -- the sink API --------------------------------------------------------------------
    async def emit(self, event: Event) -> None:
        out = self.out
        if out.closing:
            raise SinkError(f"HubLink({self.address}) is closed")
        if not self._run_id:
            self._run_id = event.run_id
        if event.WhichOneof("payload") == "run_started":
            self._goal = event.run_started.goal_summary
        out.buffer.append(event)
        self._emitted = event.sequence
        self._confirmed_all.clear()
        lane = out.pulling
        if lane is not None:
            lane.ready()  # the mux takes it with the next frame: no wake of this link's task
        else:
            out.wake.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"HubLink({self.address})")

    async def close(self, timeout: float | None = None) -> None:
        """Wait (up to ``timeout``, default ``close_timeout`` s) until the hub confirmed every
        event, then end the stream. Raises SinkError naming what the hub did not get."""
        if self._closed:
            return
        self._closed = True
        limit = self.close_timeout if timeout is None else timeout
        if self._task is not None and not self.stopped:
            try:
                await asyncio.wait_for(self._confirmed_all.wait(), limit)
            except TimeoutError:
                pass
        self.out.close()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 1.0)
            except (TimeoutError, Exception):
                pass
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
            except Exception:  # already logged by the task
                pass
        self._controls.cancel()
        for channel in self._channels.values():
            await channel.close()
        if self._acquired and self._mux is not None:
            from goldfive.link.mux import release

            self._acquired = False
            await release(self._mux)
        if len(self.buffer):
            where = f"; kept in {self.buffer.spill_path}" if self.buffer.spill_path is not None else ""
            why = self.stopped or (self.errors[-1] if self.errors else "no confirmation in time")
            message = (
                f"HubLink({self.address}): {len(self.buffer)} events of run {self._run_id} not confirmed by the hub "
                f"(sequences {self.buffer.first_sequence}..{self.buffer.last_sequence}): {why}{where}"
            )
            log.error("%s", message)
            raise SinkError(message)

    @property
    def address(self) -> str:
        """The hub this link connects (or last connected) to."""
        return self._mux.address if self._mux is not None else self.addresses[self._at]

    # -- the connection task -------------------------------------------------------------
    def _open(self) -> Any:
        if self._mux is None and self._shared:
            from goldfive.link.mux import acquire

            self._mux = acquire(self.addresses, token=self._token, tls_ca=self._tls_ca)
            self._acquired = True
        if self._mux is not None:
            return self._mux  # its Connect() opens a lane that behaves like a Connect call
        if self._shared_channel is not None:
            return hub_stub(self._shared_channel)
        if self.address in self._channels:
            self._channel = self._channels[self.address]
            return hub_stub(self._channel)
        options = [
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", int(self.max_backoff * 1000)),
        ]
        if self._tls_ca is not None:
            creds = grpc.ssl_channel_credentials(Path(self._tls_ca).read_bytes())
            self._channel = grpc.aio.secure_channel(self.address, creds, options=options)
        else:
            self._channel = grpc.aio.insecure_channel(self.address, options=options)
        self._channels[self.address] = self._channel
        return hub_stub(self._channel)

    async def _run(self) -> None:
        failures = 0
        while True:
            if failures and len(self.addresses) > 1:
                self._at = (self._at + 1) % len(self.addresses)  # that hub is gone: try the next
            stub = self._open()
            try:
                await self._session(stub)
                if self.out.closing:
                    return
                failures = 0
            except _Stopped as exc:
                self.stopped = str(exc)
                log.error("HubLink(%s): run %s is no longer sent to the hub: %s", self.address, self._run_id, exc)
                self._confirmed_all.set()  # nothing more will be confirmed: close must not wait
                self.refused.set()
                return
            except (grpc.aio.AioRpcError, _Ended) as exc:
                if self._acquired and isinstance(exc, grpc.aio.AioRpcError) and exc.code() is grpc.StatusCode.UNIMPLEMENTED:
                    await self._own_stream()  # a hub older than ConnectShared: a Connect of its own
                    continue
                if isinstance(exc, grpc.aio.AioRpcError) and exc.code() in _PERMANENT:
                    self.stopped = f"{exc.code().name}: {exc.details()}"
                    log.error("HubLink(%s): the hub refused run %s: %s", self.address, self._run_id, self.stopped)
                    self._confirmed_all.set()
                    self.refused.set()
                    return
                text = f"{exc.code().name}: {exc.details()}" if isinstance(exc, grpc.aio.AioRpcError) else str(exc)
                self.errors.append(text)
                del self.errors[:-20]
                failures += 1
                if failures == 1:
                    log.warning(
                        "HubLink(%s): %s; the run goes on, %d events held, reconnecting", self.address, text, len(self.buffer)
                    )
            except Exception as exc:  # a bug must not end this task silently: close would wait for nothing
                text = f"{type(exc).__name__}: {exc}"
                if not self.errors or self.errors[-1] != text:
                    log.exception("HubLink(%s): the connection failed unexpectedly; reconnecting", self.address)
                self.errors.append(text)
                del self.errors[:-20]
                failures += 1
            if self.out.closing:
                return
            delay = min(0.05 * 2 ** min(failures, 16), self.max_backoff) * (0.5 + random.random() / 2)
            await asyncio.sleep(delay)

    async def _own_stream(self) -> None:
        """Leave the shared stream (the hub does not offer it) for a Connect of this run's own."""
        from goldfive.link.mux import release

        mux, self._mux = self._mux, None
        self._shared = self._acquired = False
        if self._linger_default:
            self.linger = 0.005
        if mux is not None:
            await release(mux)
        log.info("HubLink(%s): the hub has no shared stream (an older hub); run %s uses a stream of its own", self.address, self._run_id)

    async def _session(self, stub: Any) -> None:
        """One Connect call, from hello to the end of the stream."""
        call = stub.Connect(metadata=self._metadata)
        try:
            hello = service_pb2.RunnerHello(
                run_id=self._run_id,
                host=socket.gethostname(),
                pid=os.getpid(),
                resume_after=self.confirmed,
                goal_summary=self._goal,
            )
            await _send(call, service_pb2.RunnerMessage(hello=hello))
            first = await call.read()
            if first is grpc.aio.EOF:
                raise _Ended("the hub closed the stream before its welcome")
            if first.WhichOneof("body") == "goodbye":
                raise _Stopped(first.goodbye)
            if first.WhichOneof("body") != "welcome":
                raise _Stopped(f"the hub answered {first.WhichOneof('body')} instead of a welcome")
            stored = first.welcome.stored_through
            held = self.buffer.first_sequence if len(self.buffer) else self._emitted + 1
            if stored < self.confirmed and held > stored + 1:
                raise _Stopped(
                    f"the hub holds run {self._run_id} only through {stored} but had confirmed {self.confirmed}; "
                    f"events {stored + 1}..{held - 1} are no longer held here (was the hub's database replaced?)"
                )
            if stored > self._emitted:
                raise _Stopped(
                    f"the hub already holds run {self._run_id} through event {stored}, beyond this runner's last event "
                    f"{self._emitted}: another run uses this id"
                )
            self.sessions += 1
            self.welcomed.set()
            self._confirm(stored)
            # A lane of a shared stream takes an ack at once, even while this link's writer
            # waits for room in the process's queue of events (see Outgoing.send_ack).
            out = self.out
            out.ack_now = getattr(call, "write_ack", None)
            reader = asyncio.ensure_future(self._read(call))
            pulled = isinstance(call, _Lane)
            writer = asyncio.ensure_future(out.write_pulled(call, stored) if pulled else out.write(call, stored))
            try:
                done, _ = await asyncio.wait({reader, writer}, return_when=asyncio.FIRST_EXCEPTION)
                for task in done:
                    task.result()  # raises the first failure
                await reader  # the writer finished (closing): wait for the hub to end the stream
            finally:
                out.ack_now = None
                for task in (reader, writer):
                    task.cancel()
                await asyncio.gather(reader, writer, return_exceptions=True)
        finally:
            call.cancel()

    def _confirm(self, sequence: int) -> None:
        if sequence > self.confirmed:
            self.confirmed = sequence
        self.out.forget_through(sequence)
        if self.confirmed >= self._emitted:
            self._confirmed_all.set()

    async def _read(self, call: Any) -> None:
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                if self.out.closing:
                    return
                raise _Ended("the hub ended the stream")
            body = msg.WhichOneof("body")
            if body == "confirmed_sequence":
                self._confirm(msg.confirmed_sequence)
            elif body == "control":
                self._controls.feed(msg.control)
            elif body == "goodbye":
                raise _Stopped(msg.goodbye)


def hub_link(
    address: str | Sequence[str],
    control: ControlChannel | None,
    *,
    token: str | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
    shared: bool = False,
) -> tuple[ControlChannel, HubLink]:
    """The run's control channel (``control``, or a new one) and a HubLink feeding it; the
    token falls back to GOLDFIVE_HUB_TOKEN, then GOLDFIVE_TOKEN. ``shared``: one stream for every such run of this
    process (Hub.ConnectShared, a lane each)."""
    from goldfive.settings import hub_token

    channel = control if control is not None else ControlChannel()
    return channel, HubLink(address, channel, token=token or hub_token(), tls_ca=tls_ca, shared=shared)
