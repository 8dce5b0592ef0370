"""ScriptedRuns: a RunsSource over scripted event lists, for tests, snapshots and the bench.

Each run is a list of real events (``goldfive_tui.scenario``); rows and waiting items come
from the real reducer (RunState) and ``attention``. ``release`` adds events to a run (and to
its open screen), ``decide`` records each decision and answers SUCCESS.
"""

from __future__ import annotations

from collections.abc import Iterable

from goldfive.control import AckResult, ControlAck
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.view.state import RunState

from ..source import ScriptedSource
from .local import decision
from .model import Snapshot, WaitingItem, row_from_state, waiting_from_state

__all__ = ["ScriptedRuns"]


class ScriptedRuns:
    owns_runs = False

    def __init__(self, runs: dict[str, list[Event]], *, origin: str = "hosted", title: str = "runs @ scripted") -> None:
        self.title = title
        self.origin = origin
        self.events: dict[str, list[Event]] = {k: list(v) for k, v in runs.items()}
        self.states: dict[str, RunState] = {k: RunState.from_events(v) for k, v in self.events.items()}
        self.opened: dict[str, ScriptedSource] = {}
        #: (item, approve, reason) for every decision asked.
        self.decisions: list[tuple[WaitingItem, bool, str]] = []
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
        rows = [row_from_state(s, run_id, self.origin) for run_id, s in self.states.items()]
        waiting = [w for run_id, s in self.states.items() for w in waiting_from_state(s, run_id)]
        waiting.sort(key=lambda w: (w.since_ms, w.key))
        return Snapshot(rows, waiting)

    def open(self, run_id: str) -> ScriptedSource:
        source = ScriptedSource(self.events[run_id], live=True, title=run_id)
        self.opened[run_id] = source
        return source

    async def decide(self, item: WaitingItem, approve: bool, reason: str = "") -> ControlAck:
        self.decisions.append((item, approve, reason))
        msg = decision(item, approve, reason)
        return ControlAck(msg.id, AckResult.SUCCESS, "")
