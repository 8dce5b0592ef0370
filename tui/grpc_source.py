"""GrpcRunSource: the TUI's RunSource for a run served by ``goldfive serve`` (``goldfive attach``).

Events come from ``RemoteClient.follow``: history, then live; a lost connection is retried
with capped backoff and resumed after the last sequence seen, so the log never shows an event
twice or skips one. ``connection_state`` says where the link is ("connecting", "connected",
"reconnecting", "ended", "closed"); ``on_state`` is told on every change.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Protocol

from goldfive.control import ControlAck, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.link.client import RemoteClient

__all__ = ["GrpcRunSource", "connection_notifier"]

StateCallback = Callable[[str, str], None]
#: Shown beside "connected" while the hub says its database cannot be reached.
DEGRADED = "hub degraded"


class GrpcRunSource:
    def __init__(
        self,
        addr: str,
        run_id: str,
        *,
        token: str | None = None,
        tls_ca: str | Path | None = None,
        tls_client_cert: str | Path | None = None,
        tls_client_key: str | Path | None = None,
        on_state: StateCallback | None = None,
        max_backoff: float = 5.0,
    ) -> None:
        self.addr = addr
        self.run_id = run_id
        self.title = f"{run_id} @ {addr}"
        self.on_state = on_state
        self.connection_state = "disconnected"
        self.connection_detail = ""
        self._token = token
        self._tls_ca = tls_ca
        self._tls_client = (tls_client_cert, tls_client_key)
        self._max_backoff = max_backoff
        self._client: RemoteClient | None = None
        #: Why the hub says it is degraded ("" when it is not), asked every ``hub_poll`` s.
        self.hub_warning = ""
        self.hub_poll = 5.0

    def _client_or_open(self) -> RemoteClient:
        if self._client is None:  # created on the app's event loop, where it is used
            cert, key = self._tls_client
            self._client = RemoteClient(
                self.addr,
                token=self._token,
                tls_ca=self._tls_ca,
                tls_client_cert=cert,
                tls_client_key=key,
                max_backoff=self._max_backoff,
            )
        return self._client

    def _set_state(self, state: str, detail: str) -> None:
        self.connection_state, self.connection_detail = state, detail
        self._tell()

    def _tell(self) -> None:
        if self.on_state is None:
            return
        if self.hub_warning and self.connection_state == "connected":
            self.on_state(f"connected · {DEGRADED}", self.hub_warning)
        else:
            self.on_state(self.connection_state, self.connection_detail)

    async def start(self) -> None:
        self._client_or_open()

    async def events(self) -> AsyncIterator[Event]:
        watch = asyncio.get_running_loop().create_task(self._watch_hub())
        try:
            async for ev in self._client_or_open().follow(self.run_id, on_state=self._set_state):
                yield ev
        finally:
            watch.cancel()

    async def _watch_hub(self) -> None:
        """Ask the hub every ``hub_poll`` seconds whether it is degraded (its database lost):
        the header says so while it is."""
        while True:
            await asyncio.sleep(self.hub_poll)
            try:
                snap = await self._client_or_open().get_run(self.run_id, timeout=5.0)
            except Exception:  # the stream's own reconnecting says what is wrong with the link
                continue
            if snap.hub_warning != self.hub_warning:
                self.hub_warning = snap.hub_warning
                self._tell()

    async def send(self, msg: ControlMessage) -> ControlAck:
        return await self._client_or_open().send_control(self.run_id, msg)

    async def stop(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
        self._set_state("closed", "")


class ConnectionView(Protocol):
    """Where a run's connection shows (the run screen): its sub-title, its header, a toast."""

    sub_title: str | None

    def set_connection_state(self, state: str, detail: str) -> None: ...

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None) -> None: ...


def _end_is_news(view: ConnectionView) -> bool:
    """Whether the stream's end is worth a toast: not when the view says it is not (a run
    screen whose run ended, which its header shows, or one the person has left)."""
    ask = getattr(view, "stream_end_is_news", None)
    return bool(ask()) if callable(ask) else True


def connection_notifier(view: ConnectionView) -> StateCallback:
    """Show connection changes on ``view``: one toast per change of state (not per retry) and
    the state in its sub-title; ``set_connection_state(state, detail)`` is told every update,
    so the header shows the state persistently."""
    titles = {
        "connected": "connected", "reconnecting": "connection lost, reconnecting", "ended": "stream ended",
        f"connected · {DEGRADED}": DEGRADED,
    }  # fmt: skip
    severities = {"connected": "information", "reconnecting": "warning", "ended": "information", f"connected · {DEGRADED}": "warning"}
    last = [""]

    def on_state(state: str, detail: str) -> None:
        view.sub_title = state
        view.set_connection_state(state, detail)
        if state == last[0] or state not in titles:
            last[0] = state
            return
        last[0] = state
        if state == "ended" and not _end_is_news(view):
            return
        text = detail if len(detail) <= 100 else detail[:99] + "…"
        view.notify(text or state, title=titles[state], severity=severities[state], timeout=6)

    return on_state
