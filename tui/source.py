"""Where the TUI gets a run from: the RunSource protocol and a scripted source for tests.

A source yields the run's events (history first, then live) and sends controls, answering
each with the runtime's ack. The in-process Runner and the gRPC client are other sources.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, AsyncIterator, Callable, Iterable, Protocol, runtime_checkable

from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event

if TYPE_CHECKING:
    from goldfive.sinks.memory import Missed

__all__ = ["RunSource", "ScriptedSource"]


@runtime_checkable
class RunSource(Protocol):
    """Optional attributes the app looks for: ``owns_run`` (True when the run lives in this
    process, so quitting would end it), ``recorded_at()``, ``wait_finished()`` and
    ``tracebacks`` (task id -> the agent's traceback), all on LocalRunSource."""

    title: str

    def events(self) -> AsyncIterator[Event | Missed]:
        """History then live events; ends when the run's stream ends. A ``Missed`` marks
        events this reader lost (count, first_sequence, last_sequence)."""
        ...

    async def send(self, msg: ControlMessage) -> ControlAck:
        """Deliver one control and return its ack."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


_END = object()

#: Reacts to a sent control with the events the runtime would emit for it.
Reaction = Callable[[ControlMessage, ControlAck], Iterable[Event]]


class ScriptedSource:
    """Yields a fixed list of events, then (when ``live``) whatever the test releases.

    ``send`` records each message in ``.sent`` and answers with ``acks[kind]`` (default
    SUCCESS); a ``react`` callback may turn the control into events, released at once.
    ``wait_idle()`` returns once the reader has taken every released event and asked for
    more, so tests can wait for the reducer without sleeping.
    """

    def __init__(
        self,
        events: Iterable[Event],
        *,
        live: bool = False,
        title: str = "scripted run",
        acks: dict[ControlKind | str, tuple[AckResult, str]] | None = None,
        react: Reaction | None = None,
        clock: Callable[[], int] | None = None,
        owns_run: bool = False,
    ) -> None:
        self.title = title
        #: As LocalRunSource: the run lives in this process (q asks before ending it).
        self.owns_run = owns_run
        self.live = live
        self.sent: list[ControlMessage] = []
        self.acks = dict(acks or {})
        self.react = react
        self._clock = clock or (lambda: 0)
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        for ev in events:
            self._queue.put_nowait(ev)
        if not live:
            self._queue.put_nowait(_END)
        self._idle = asyncio.Event()
        self.started = False
        self.stopped = False

    # -- test side -------------------------------------------------------------------------
    def release(self, events: Iterable[object]) -> None:
        """Make more events (or ``Missed`` markers) available to the reader."""
        for ev in events:
            self._idle.clear()
            self._queue.put_nowait(ev)

    def end(self) -> None:
        self._idle.clear()
        self._queue.put_nowait(_END)

    async def wait_idle(self) -> None:
        await self._idle.wait()

    # -- RunSource ---------------------------------------------------------------------------
    async def events(self) -> AsyncIterator[Event | Missed]:
        while True:
            if self._queue.empty():
                self._idle.set()
            item = await self._queue.get()
            if item is _END:
                self._idle.set()
                return
            yield item  # type: ignore[misc]

    async def send(self, msg: ControlMessage) -> ControlAck:
        self.sent.append(msg)
        result, detail = self.acks.get(msg.kind, (AckResult.SUCCESS, ""))
        ack = ControlAck(msg.id, result, detail, acked_at_ms=self._clock())
        if self.react is not None:
            self.release(self.react(msg, ack))
        return ack

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.stopped = True
        self.end()
