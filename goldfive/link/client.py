"""RemoteClient: list, inspect, control and follow runs served by ``goldfive serve``.

Every failed call raises :class:`RemoteError` carrying the gRPC status name. ``follow``
survives a server that goes away: it reconnects with capped exponential backoff and resumes
after the last sequence it yielded, so nothing is lost and nothing is yielded twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc

from goldfive import conv
from goldfive.control import ControlAck, ControlMessage
from goldfive.errors import RemoteError
from goldfive.pb.goldfive.v1 import control_pb2, events_pb2, service_pb2, service_pb2_grpc
from goldfive.link.wire import bearer_metadata

__all__ = ["RemoteClient", "StateCallback"]

#: Told about connection changes: ("connecting" | "connected" | "reconnecting" | "ended", detail).
StateCallback = Callable[[str, str], None]

#: Codes after which a follow reconnects rather than gives up.
_RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED})


def _error(exc: grpc.aio.AioRpcError) -> RemoteError:
    code = exc.code()
    return RemoteError(code.name if code is not None else "UNKNOWN", exc.details() or "")


def _pem(source: str | Path | bytes | None) -> bytes | None:
    if source is None or isinstance(source, bytes):
        return source
    return Path(source).read_bytes()


class RemoteClient:
    """An async client for the ``goldfive.v1.Runs`` service. Use ``async with`` or ``close()``.
    ``tls_ca`` turns TLS on; ``tls_client_cert`` / ``tls_client_key`` present a client
    certificate to a server that requires one (with TLS, trusting the system's roots when
    there is no ``tls_ca``)."""

    def __init__(
        self,
        addr: str,
        token: str | None = None,
        tls_ca: str | Path | bytes | None = None,
        *,
        tls_server_name: str | None = None,
        tls_client_cert: str | Path | bytes | None = None,
        tls_client_key: str | Path | bytes | None = None,
        max_backoff: float = 2.0,
    ) -> None:
        self.addr = addr
        self._metadata = bearer_metadata(token)
        self.max_backoff = max_backoff
        # The channel's own reconnect backoff would otherwise grow to minutes while a
        # server restarts; keep it at the scale of ours.
        options: list[tuple[str, Any]] = [
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", int(max_backoff * 1000)),
        ]
        if tls_ca is not None or tls_client_cert is not None:  # no CA: the system's roots
            if tls_server_name:
                options.append(("grpc.ssl_target_name_override", tls_server_name))
            creds = grpc.ssl_channel_credentials(
                _pem(tls_ca), private_key=_pem(tls_client_key), certificate_chain=_pem(tls_client_cert)
            )
            self._channel = grpc.aio.secure_channel(addr, creds, options=options)
        else:
            self._channel = grpc.aio.insecure_channel(addr, options=options)
        self._stub = service_pb2_grpc.RunsStub(self._channel)
        #: Whether the server answers SubscribeBatches (found out on the first try).
        self._batches = True
        #: Why the hub said it is degraded at the last ``list_runs`` ("" when it is not).
        self.hub_warning = ""

    async def __aenter__(self) -> RemoteClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the connection to the server (gRPC retries a
        refused or failed connection with the channel's backoff: 100 ms, growing to
        ``max_backoff``); False when it is not up by then. Sends nothing, so a caller may
        wait before a call that must not be sent twice (a control)."""
        try:
            await asyncio.wait_for(self._channel.channel_ready(), timeout)
        except TimeoutError:
            return False
        return True

    # -- unary calls ---------------------------------------------------------------------
    async def list_runs(self, *, include_archived: bool = False, timeout: float | None = 10.0) -> list[service_pb2.RunSummary]:
        """Every run the hub serves (those a person archived only with ``include_archived``)."""
        request = service_pb2.ListRunsRequest(include_archived=include_archived)
        try:
            resp: service_pb2.ListRunsResponse = await self._stub.ListRuns(request, metadata=self._metadata, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from None
        self.hub_warning = resp.hub_warning
        return list(resp.runs)

    async def get_run(self, run_id: str, *, timeout: float | None = 10.0) -> service_pb2.RunSnapshot:
        try:
            snap: service_pb2.RunSnapshot = await self._stub.GetRun(
                service_pb2.GetRunRequest(run_id=run_id), metadata=self._metadata, timeout=timeout
            )
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from None
        return snap

    async def start_run(
        self, agent: str, *, goal: str = "", plan_json: str = "", speed: float = 0.0, budget: str = "", timeout: float | None = 30.0
    ) -> str:
        """Host a new run in the server's process: ``agent`` is "demo" (with ``speed``) or
        MODULE:FUNCTION importable by the server (with ``goal`` and an optional plan as JSON
        text); ``budget`` ("tokens=50000,usd=2") is the run's own from its start (the hub's
        ``serve --budget`` default never applies to it). Returns the run id; a bad agent spec
        or budget raises RemoteError INVALID_ARGUMENT."""
        request = service_pb2.StartRunRequest(agent=agent, goal=goal, plan_json=plan_json, speed=speed, budget=budget)
        try:
            resp: service_pb2.StartRunResponse = await self._stub.StartRun(request, metadata=self._metadata, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from None
        return resp.run_id

    async def mark_run(self, run_id: str, mark: str, *, undo: bool = False, timeout: float | None = 10.0) -> service_pb2.RunSummary:
        """Put a person's mark on the run, kept by the hub: "acknowledged" (its failure was
        seen) or "archived"; ``undo`` takes it off. Returns the run's summary after it."""
        request = service_pb2.MarkRunRequest(run_id=run_id, mark=mark, undo=undo)
        try:
            out: service_pb2.RunSummary = await self._stub.MarkRun(request, metadata=self._metadata, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from None
        return out

    async def list_waiting(self, run_id: str = "", *, timeout: float | None = 10.0) -> list[service_pb2.WaitingItem]:
        """Every pending approval and escalation (of ``run_id``, else of every run), oldest first."""
        try:
            resp: service_pb2.ListWaitingResponse = await self._stub.ListWaiting(
                service_pb2.ListWaitingRequest(run_id=run_id), metadata=self._metadata, timeout=timeout
            )
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from None
        return list(resp.items)

    async def send_control(self, run_id: str, msg: ControlMessage, *, timeout: float | None = 35.0) -> ControlAck:
        """Deliver ``msg`` to the run and return the ack the run produced for it."""
        request = service_pb2.SendControlRequest(run_id=run_id, control=conv.to_pb_control_event(msg))
        try:
            ack: control_pb2.ControlAck = await self._stub.SendControl(request, metadata=self._metadata, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from None
        return conv.from_pb_control_ack(ack)

    # -- streams -------------------------------------------------------------------------
    async def subscribe(
        self, run_id: str, after_sequence: int = -1, *, on_open: Callable[[], None] | None = None
    ) -> AsyncIterator[events_pb2.Event]:
        """Events with sequence > ``after_sequence`` until the run's stream ends.
        ``on_open`` runs once the server accepted the subscription. Closing the iterator
        cancels the call."""
        call = self._stub.Subscribe(
            service_pb2.SubscribeRequest(run_id=run_id, after_sequence=after_sequence), metadata=self._metadata
        )
        try:
            if on_open is not None:
                await call.initial_metadata()
                if call.done() and (code := await call.code()) != grpc.StatusCode.OK:
                    raise RemoteError(code.name, await call.details() or "")
                on_open()
            async for ev in call:
                yield ev
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from None
        finally:
            call.cancel()

    async def subscribe_batches(
        self, run_id: str, after_sequence: int = -1, *, on_open: Callable[[], None] | None = None
    ) -> AsyncIterator[list[events_pb2.Event]]:
        """``subscribe`` in batches (``Runs.SubscribeBatches``); against a server without it
        (UNIMPLEMENTED) it falls back to ``Subscribe``, one event per batch."""
        if not self._batches:
            async for ev in self.subscribe(run_id, after_sequence, on_open=on_open):
                yield [ev]
            return
        call = self._stub.SubscribeBatches(
            service_pb2.SubscribeRequest(run_id=run_id, after_sequence=after_sequence), metadata=self._metadata
        )
        try:
            try:
                await call.initial_metadata()
                if call.done() and (code := await call.code()) != grpc.StatusCode.OK:
                    raise RemoteError(code.name, await call.details() or "")
            except grpc.aio.AioRpcError as exc:
                raise _error(exc) from None
            except RemoteError as exc:
                if exc.code != "UNIMPLEMENTED":
                    raise
                self._batches = False  # an older server: remember, and use Subscribe
                async for ev in self.subscribe(run_id, after_sequence, on_open=on_open):
                    yield [ev]
                return
            if on_open is not None:
                on_open()
            async for batch in call:
                yield list(batch.events)
        except grpc.aio.AioRpcError as exc:
            raise _error(exc) from None
        finally:
            call.cancel()

    async def follow(
        self,
        run_id: str,
        after_sequence: int = -1,
        *,
        on_state: StateCallback | None = None,
        initial_backoff: float = 0.1,
        max_attempts: int | None = None,
    ) -> AsyncIterator[events_pb2.Event]:
        """Like ``subscribe``, but a connection lost (UNAVAILABLE) is retried with capped
        exponential backoff, resuming after the last sequence yielded. Other errors raise;
        ``max_attempts`` consecutive failures raise the last one."""
        batches = self.follow_batches(
            run_id, after_sequence, on_state=on_state, initial_backoff=initial_backoff, max_attempts=max_attempts
        )
        try:
            async for batch in batches:
                for ev in batch:
                    yield ev
        finally:
            await batches.aclose()

    async def follow_batches(
        self,
        run_id: str,
        after_sequence: int = -1,
        *,
        on_state: StateCallback | None = None,
        initial_backoff: float = 0.1,
        max_attempts: int | None = None,
    ) -> AsyncGenerator[list[events_pb2.Event], None]:
        """``follow`` a batch at a time (SubscribeBatches, or Subscribe on an older server)."""
        last = after_sequence
        failures = 0
        notify = on_state or (lambda state, detail: None)
        notify("connecting", self.addr)
        while True:
            def opened() -> None:
                nonlocal failures
                failures = 0
                notify("connected", self.addr)

            try:
                async for batch in self.subscribe_batches(run_id, last, on_open=opened):
                    if batch and batch[0].sequence <= last and last >= 0:
                        batch = [ev for ev in batch if ev.sequence > last]  # never yield twice
                    if not batch:
                        continue
                    last = batch[-1].sequence
                    yield batch
                notify("ended", f"stream of run {run_id} ended")
                return
            except RemoteError as exc:
                if exc.code not in {c.name for c in _RETRYABLE}:
                    raise
                failures += 1
                if max_attempts is not None and failures >= max_attempts:
                    raise
                delay = min(initial_backoff * (2 ** (failures - 1)), self.max_backoff)
                notify("reconnecting", f"{exc}; retry {failures} in {delay:.1f}s from sequence {last + 1}")
                await asyncio.sleep(delay)
