"""Scripted sources for the TUI tests, snapshots, benches and the preview script; not shipped.

ScriptedSource is one run (a RunSource) over a fixed list of events, then whatever a test
releases; ScriptedRuns is many runs (a RunsSource) over scripted event lists, whose rows and
waiting items come from the real reducer (RunState) and ``attention``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks.memory import Missed
from goldfive.view.state import RunState
from goldfive_tui.runs.local import decision
from goldfive.store.registry import ACKNOWLEDGED, ARCHIVED
from goldfive.view.attention import mark_refusal
from goldfive_tui.runs.model import MarkRefused, Snapshot, WaitingItem, row_from_state, waiting_from_state

__all__ = ["Reaction", "ScriptedRuns", "ScriptedSource"]

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


class ScriptedRuns:
    """``release`` adds events to a run (and to its open screen), ``decide`` records each
    decision and answers SUCCESS."""

    owns_runs = False

    def __init__(self, runs: dict[str, list[Event]], *, origin: str = "hosted", title: str = "runs @ scripted") -> None:
        self.title = title
        self.origin = origin
        self.events: dict[str, list[Event]] = {k: list(v) for k, v in runs.items()}
        self.states: dict[str, RunState] = {k: RunState.from_events(v) for k, v in self.events.items()}
        self.opened: dict[str, ScriptedSource] = {}
        #: (item, approve, reason) for every decision asked.
        self.decisions: list[tuple[WaitingItem, bool, str]] = []
        self.answers: list[dict[str, str] | None] = []
        #: The control each decision sends (built by the TUI's own ``decision``).
        self.messages: list[ControlMessage] = []
        #: run id -> the marks a person put on it (acknowledged, archived).
        self.marks: dict[str, set[str]] = {}
        self.polls = 0

    def release(self, run_id: str, events: Iterable[Event]) -> None:
        events = list(events)
        self.events.setdefault(run_id, []).extend(events)
        state = self.states.setdefault(run_id, RunState())
        for ev in events:
            state.apply(ev)
        if run_id in self.opened:
            self.opened[run_id].release(events)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def poll(self) -> Snapshot:
        self.polls += 1
        rows = [
            row_from_state(s, run_id, self.origin, acknowledged=ACKNOWLEDGED in self.marks.get(run_id, ()))
            for run_id, s in self.states.items()
            if ARCHIVED not in self.marks.get(run_id, ())
        ]
        waiting = [w for run_id, s in self.states.items() for w in waiting_from_state(s, run_id)]
        waiting.sort(key=lambda w: (w.since_ms, w.key))
        return Snapshot(rows, waiting)

    def open(self, run_id: str) -> ScriptedSource:
        source = ScriptedSource(self.events[run_id], live=True, title=run_id)
        self.opened[run_id] = source
        return source

    async def mark(self, run_id: str, mark: str, *, undo: bool = False) -> None:
        if problem := mark_refusal(self.states[run_id], mark, undo=undo):
            raise MarkRefused(problem)
        marks = self.marks.setdefault(run_id, set())
        (marks.discard if undo else marks.add)(mark)

    async def decide(
        self, item: WaitingItem, approve: bool, reason: str = "", answer: dict[str, str] | None = None, arguments: dict[str, Any] | None = None
    ) -> ControlAck:
        self.decisions.append((item, approve, reason))
        self.answers.append(answer)
        msg = decision(item, approve, reason, answer, arguments)
        self.messages.append(msg)
        return ControlAck(msg.id, AckResult.SUCCESS, "")
