"""GRPCSink: streams a run's events to a ``GoldfiveIngress.StreamEvents`` collector.

``emit`` only appends to a buffer; one background task owns the connection. It sends the
buffer in segments, each one StreamEvents call that ends when the buffer has been idle for
``linger`` seconds (or after ``segment_events``); the response's ``received`` count is the
acknowledgement, and only acknowledged events leave the buffer. When a call fails (server
down, connection dropped) the task backs off (capped, exponential) and resends every
unacknowledged event; the collector drops the ones it already stored by event id, so nothing
is lost or doubled. The buffer holds at most ``max_buffer`` events: beyond that the oldest are
dropped and counted. ``close`` flushes for up to ``close_timeout`` seconds and raises
SinkError naming what could not be delivered: never silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1 import service_pb2_grpc
from goldfive.pb.goldfive.v1.events_pb2 import Event

__all__ = ["GRPCSink"]

log = logging.getLogger("goldfive.sinks")


def _read(path: str | Path | None) -> bytes | None:
    return None if path is None else Path(path).read_bytes()


class _Refused(Exception):
    """The collector answered with an error (it could not store an event)."""


class _Segment:
    """The state of one StreamEvents call: how many buffered events it wrote."""

    __slots__ = ("cursor", "dropped_written", "done")

    def __init__(self) -> None:
        self.cursor = 0  # buffer[:cursor] were written on this call
        self.dropped_written = 0  # of those, dropped by overflow since
        self.done = False


class GRPCSink:
    def __init__(
        self,
        endpoint: str,
        *,
        token: str | None = None,
        tls_ca: str | Path | None = None,
        tls_client_cert: str | Path | None = None,
        tls_client_key: str | Path | None = None,
        max_buffer: int = 100_000,
        close_timeout: float = 5.0,
        max_backoff: float = 2.0,
        linger: float = 0.05,
        segment_events: int = 1000,
    ) -> None:
        if max_buffer < 1:
            raise ValueError(f"max_buffer must be >= 1, got {max_buffer}")
        self.endpoint = endpoint
        self.max_buffer = max_buffer
        self.close_timeout = close_timeout
        self.max_backoff = max_backoff
        self.linger = linger
        self.segment_events = segment_events
        #: Events acknowledged by the collector.
        self.acknowledged = 0
        #: Events dropped because the buffer was full.
        self.dropped = 0
        self.errors: list[str] = []
        self._token = token
        self._tls_ca = tls_ca
        #: This producer's certificate and key, for a collector that requires one.
        self._tls_client = (tls_client_cert, tls_client_key)
        self._buffer: deque[Event] = deque()  # unacknowledged, in emit order
        self._seg: _Segment | None = None
        self._wake = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._closing = False
        self._closed = False
        self._task: asyncio.Task[None] | None = None
        self._channel: grpc.aio.Channel | None = None

    @property
    def pending(self) -> int:
        """Events not yet acknowledged."""
        return len(self._buffer)

    async def emit(self, event: Event) -> None:
        if self._closing:
            raise SinkError(f"GRPCSink({self.endpoint}) is closed")
        if len(self._buffer) >= self.max_buffer:
            self._buffer.popleft()
            seg = self._seg
            if seg is not None and seg.cursor:  # written on the current call: its ack must not count
                seg.cursor -= 1
                seg.dropped_written += 1
            if not self.dropped:
                log.warning("GRPCSink(%s): buffer full (%d); dropping the oldest events", self.endpoint, self.max_buffer)
            self.dropped += 1
        self._buffer.append(event)
        self._drained.clear()
        self._wake.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"GRPCSink({self.endpoint})")

    async def flush(self, timeout: float | None = None) -> None:
        """Wait until every buffered event is acknowledged (TimeoutError after ``timeout``)."""
        await asyncio.wait_for(self._drained.wait(), timeout)

    async def close(self, timeout: float | None = None) -> None:
        """Send what is buffered (for up to ``timeout``, default ``close_timeout`` seconds),
        stop, and raise SinkError if anything was not delivered. Idempotent."""
        if self._closed:
            return
        self._closed = self._closing = True
        self._wake.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), self.close_timeout if timeout is None else timeout)
            except TimeoutError:
                self._task.cancel()
                try:
                    await self._task
                except asyncio.CancelledError:
                    current = asyncio.current_task()
                    if current is not None and current.cancelling():
                        raise  # our caller is cancelled too
        if self._channel is not None:
            await self._channel.close()
        if self._buffer or self.dropped:
            parts = []
            if self._buffer:
                first, last = self._buffer[0], self._buffer[-1]
                parts.append(f"{len(self._buffer)} events not delivered (sequences {first.sequence}..{last.sequence})")
            if self.dropped:
                parts.append(f"{self.dropped} dropped when the buffer was full")
            last_error = f"; last error: {self.errors[-1]}" if self.errors else ""
            message = f"GRPCSink({self.endpoint}): {', '.join(parts)}{last_error}"
            log.error("%s", message)
            raise SinkError(message)

    # -- the sending task ------------------------------------------------------------------

    def _open(self) -> Any:
        options = [
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", int(self.max_backoff * 1000)),
        ]
        cert, key = self._tls_client
        if self._tls_ca is not None or cert is not None:  # no CA: the system's roots
            creds = grpc.ssl_channel_credentials(_read(self._tls_ca), private_key=_read(key), certificate_chain=_read(cert))
            self._channel = grpc.aio.secure_channel(self.endpoint, creds, options=options)
        else:
            self._channel = grpc.aio.insecure_channel(self.endpoint, options=options)
        return service_pb2_grpc.GoldfiveIngressStub(self._channel)

    async def _run(self) -> None:
        stub = self._open()
        metadata = (("authorization", f"Bearer {self._token}"),) if self._token else ()
        failures = 0
        while True:
            if not self._buffer:
                self._drained.set()
                if self._closing:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                await self._segment(stub, metadata)
                failures = 0
            except (grpc.aio.AioRpcError, _Refused) as exc:
                failures += 1
                text = f"{exc.code().name}: {exc.details()}" if isinstance(exc, grpc.aio.AioRpcError) else str(exc)
                self.errors.append(text)
                del self.errors[:-20]
                delay = min(0.05 * 2 ** (failures - 1), self.max_backoff)
                if failures == 1:
                    log.warning("GRPCSink(%s): %s; %d events buffered, resending", self.endpoint, text, len(self._buffer))
                await asyncio.sleep(delay)

    async def _segment(self, stub: Any, metadata: Any) -> None:
        """One StreamEvents call over the buffer's unacknowledged events (and new ones)."""
        seg = self._seg = _Segment()
        try:
            response = await stub.StreamEvents(self._requests(seg), metadata=metadata)
        finally:
            seg.done, self._seg = True, None
        done = min(max(response.received - seg.dropped_written, 0), seg.cursor)
        for _ in range(done):
            self._buffer.popleft()
        self.acknowledged += done
        if response.error:
            raise _Refused(response.error)

    async def _requests(self, seg: _Segment) -> AsyncIterator[Event]:
        sent = 0
        while sent < self.segment_events and not seg.done:
            if seg.cursor < len(self._buffer):
                event = self._buffer[seg.cursor]
                seg.cursor += 1
                sent += 1
                yield event
                continue
            if self._closing:
                return
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), self.linger)
            except TimeoutError:
                return  # idle: end the call to learn what the collector has
