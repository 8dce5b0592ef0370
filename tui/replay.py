"""Replay: a recorded run at a cursor, and the ReplayBar that moves the cursor.

A replay is a RunScreen built with ``replay=Replay(recording)`` and no controls
(``goldfive_tui.run.replay_screen``; the screen imports this module, not the other way):
the plan, approvals, header and event log show the run as of the cursor. Stepping forward
applies one event; any other move rebuilds the state from the Timeline's nearest checkpoint.
Log lines are formatted only when drawn (``_LogLines``), so a 100,000-event recording opens as
fast as it can be read. The bar is the transport: it plays, changes speed, indexes a long
recording in the background, and posts ``ReplayBar.Moved`` whenever the cursor moved.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from typing import Callable, Sequence, overload

from rich.text import Text
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.recording import Recording
from goldfive.timeline import Timeline
from goldfive.view import RunState

from .format import LogLine, clock_text, control_line, describe
from .widgets.eventlog import EventLog, _matches

__all__ = ["BACK_TO_PICKER", "Replay", "ReplayBar", "show_lines"]

#: Play at 1x: None is real time (the recorded spacing of the events); a number is a fixed
#: rate, events per second (tests drive the ticks themselves).
PLAY_RATE: float | None = None
#: Real time shortens a longer silence to this (a run that waited an hour for a person plays
#: on after 2 s); help and the bar say so.
MAX_GAP_MS = 2_000
#: Events closer together than this (at the speed played) are shown in one step.
SAME_STEP_S = 0.01
#: The shortest wait between two steps of a playing replay (seconds).
MIN_TICK_S = 0.001
#: Play speeds, slowest first; ``+`` / ``-`` move along them.
SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
#: What ``]`` / ``[`` jump between: the controls, the approvals (and questions), the failures.
MARKS = frozenset({"control_received", "approval_requested", "question_asked", "task_failed", "run_aborted", "recording_failed"})
SCRUB_CELLS = 24
#: A recording up to this many events is indexed before the screen opens; a longer one opens at
#: once (its first INDEX_STEP events) and is indexed in the background, INDEX_STEP at a time.
INDEX_NOW = 50_000
INDEX_STEP = 20_000
#: Background indexing folds this many events at a time and gives the loop back after at most
#: INDEX_SLICE seconds of folding (the first screen, keys and paints are served in between).
INDEX_BITE = 500
INDEX_SLICE = 0.02
#: How much of a long recording is folded before its first screen.
FIRST_SCREEN = 2_000


class _LogLines(Sequence[LogLine]):
    """The event log lines of the recording's first ``cursor`` events, each built on first
    access. One line per event, except a control: its ``control_received`` line is the
    control's one line (as the live log shows it, rewritten by its ack) and its
    ``control_acked`` has none. ``state`` gives the run as of the cursor, whose controls
    those lines show (an ack after the cursor is not shown yet)."""

    def __init__(self, events: Sequence[Event], started_ms: int, state: Callable[[], RunState] | None = None) -> None:
        self._events = events
        self._started_ms = started_ms
        self._state = state
        self._cache: dict[int, LogLine] = {}
        #: The event behind each line, for the events scanned so far (``_scanned``).
        self._shown: list[int] = []
        self._scanned = 0
        #: Controls whose control_received was scanned: their ack gets no line of its own.
        self._received: set[str] = set()
        #: How many lines are shown (``set_cursor``); nothing is scanned before the first.
        self.limit = 0

    def _scan(self, n: int) -> None:
        events = self._events
        for i in range(self._scanned, n):
            ev = events[i]
            kind = ev.WhichOneof("payload")
            if kind == "control_received":
                self._received.add(ev.control_received.control.id)
            elif kind == "control_acked" and ev.control_acked.ack.control_id in self._received:
                continue  # shown on its control's line
            self._shown.append(i)
        self._scanned = max(self._scanned, n)

    def set_cursor(self, cursor: int) -> int:
        """Show the lines of the first ``cursor`` events; returns how many lines that is."""
        cursor = max(0, min(cursor, len(self._events)))
        self._scan(cursor)
        self.limit = bisect.bisect_left(self._shown, cursor)
        return self.limit

    def _line(self, i: int) -> LogLine:
        e = self._shown[i]
        ev = self._events[e]
        at = clock_text(ev.emitted_at.ToMilliseconds() - self._started_ms) if self._started_ms else "--:--"
        if self._state is not None and ev.WhichOneof("payload") == "control_received":
            view = self._state().controls.get(ev.control_received.control.id)
            if view is not None:  # as of the cursor: waiting for its ack, or its outcome
                return control_line(view, at, received=True)._replace(event=ev)
        line = self._cache.get(e)
        if line is None:
            label, text, style = describe(ev)
            line = self._cache[e] = LogLine(at, label, text, style, ev)  # Enter opens the event whole
        return line

    def __len__(self) -> int:
        return self.limit

    @overload
    def __getitem__(self, index: int) -> LogLine: ...
    @overload
    def __getitem__(self, index: slice) -> list[LogLine]: ...
    def __getitem__(self, index: int | slice) -> LogLine | list[LogLine]:
        if isinstance(index, slice):
            return [self._line(i) for i in range(self.limit)[index]]
        if index < 0:
            index += self.limit
        if not 0 <= index < self.limit:
            raise IndexError(index)
        return self._line(index)


def show_lines(log: EventLog, lines: _LogLines, cursor: int) -> None:
    """Point the log at the lines of the recording's first ``cursor`` events.

    EventLog is built for appending; here the view also shrinks, so its filter index is kept
    in step by hand: extended for new lines, cut at the cursor for removed ones (a step with
    a filter on 100,000 lines stays O(step), not O(lines)).
    """
    before = lines.limit if log.lines is lines else 0
    limit = lines.set_cursor(cursor)
    log.lines = lines  # type: ignore[assignment]  # a read-only view, never appended to
    shown = log._shown
    if shown is not None:
        if limit >= before:
            needle = log.filter_text.lower()
            shown.extend(i for i in range(before, limit) if _matches(lines[i], needle))
        else:
            del shown[bisect.bisect_left(shown, limit) :]
    log.new_lines = 0
    log._pending = True  # flushed by the screen's throttled repaint


class Replay:
    """``recording`` at a cursor: ``state`` is the run after ``cursor`` events. It opens at
    ``start_at`` events applied (default: the end, the final state, once indexed)."""

    def __init__(self, recording: Recording, *, start_at: int | None = None, play_rate: float | None = PLAY_RATE) -> None:
        self.recording = recording
        self.total = len(recording.events)
        self.timeline = Timeline(recording.events, index_now=self.total <= INDEX_NOW)
        if not self.timeline.complete:
            self.timeline.index(FIRST_SCREEN)
        self.play_rate = play_rate
        self.speed = 1.0
        #: Where the person asked to be: the end (None) is reached once indexing is done.
        self.wanted = start_at
        #: The person moved the cursor (indexing then leaves it where it is).
        self.moved = False
        self.cursor = min(self.timeline.indexed, self.total if start_at is None else max(0, min(start_at, self.total)))
        self.state = self.timeline.state_at(self.cursor)
        self.lines = _LogLines(recording.events, self.timeline.final.started_ms, lambda: self.state)

    def move_to(self, n: int) -> bool:
        """Go to ``n`` events applied (clamped to the recording, and to what is indexed so
        far); False when the cursor was there already."""
        n = max(0, min(n, self.total, self.timeline.indexed))
        if n == self.cursor:
            return False
        if n == self.cursor + 1:
            self.state.apply(self.timeline.events[self.cursor])
        else:
            self.state = self.timeline.state_at(n)
        self.cursor = n
        return True

    def delay_before(self, n: int) -> float:
        """Seconds to wait, playing, before event ``n`` is applied: its recorded distance from
        the one before (at most MAX_GAP_MS), divided by the speed; or the fixed rate's step."""
        if self.play_rate is not None:
            return 1 / (self.play_rate * self.speed)
        events = self.timeline.events
        if n <= 0 or n >= len(events):
            return 0.0
        gap = events[n].emitted_at.ToMilliseconds() - events[n - 1].emitted_at.ToMilliseconds()
        return max(0, min(gap, MAX_GAP_MS)) / 1000 / self.speed

    def mark(self, direction: int) -> int | None:
        """The cursor just after the next (``direction`` 1) or previous (-1) control, approval,
        question or failure from here; None when there is none that way."""
        events, limit = self.timeline.events, min(self.total, self.timeline.indexed)
        if direction > 0:
            found = range(self.cursor, limit)
        else:
            found = range(min(self.cursor, limit) - 2, -1, -1)
        for i in found:
            if events[i].WhichOneof("payload") in MARKS:
                return i + 1
        return None

    def scrubber(self) -> str:
        """Where the cursor is in the recording: a bar of SCRUB_CELLS cells and a percentage."""
        frac = self.cursor / self.total if self.total else 1.0
        filled = round(frac * SCRUB_CELLS)
        return f"{'█' * filled}{'░' * (SCRUB_CELLS - filled)} {frac:4.0%}"

    def status_text(self, playing: bool) -> str:
        parts = [f"replay  {self.scrubber()}  event {self.cursor}/{self.total}"]
        if not self.timeline.complete:
            parts.append(f"indexing {self.timeline.indexed / max(1, self.total):.0%}")
        if self.recording.skipped:
            noun = "line" if self.recording.skipped == 1 else "lines"
            parts.append(f"({self.recording.skipped} {noun} skipped)")
        damaged = getattr(self.recording.events, "damaged", 0)
        if damaged:
            parts.append(f"({damaged} damaged {'event' if damaged == 1 else 'events'} shown empty)")
        pace = f"{self.speed:g}x" + ("" if self.play_rate is not None else " real time")
        parts.append(f"▶ playing {pace}" if playing else f"⏸ paused ({pace})")
        if self.recording.note:
            parts.append(self.recording.note)
        return "  ".join(parts)


class ReplayBar(Static):
    """The transport: the run screen's replay keys call ``step``, ``jump``, ``play`` and
    ``faster``; the bar says where the cursor is and posts ``Moved`` when it moved."""

    DEFAULT_CSS = """
    ReplayBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    class Moved(Message):
        """The cursor moved: show the replay's state and its first ``cursor`` lines."""

    def __init__(self, replay: Replay, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.replay = replay
        self._player: Timer | None = None

    def on_mount(self) -> None:
        self._paint()
        # after the first screen is drawn: a fold of the whole recording started during mount
        # held every message of the mount up behind it (30 s to a first screen at 1M events)
        self.call_after_refresh(self._start_indexing)

    def _start_indexing(self) -> None:
        self.run_worker(self._index(), name="index", group="replay", exclusive=True)

    async def _index(self) -> None:
        """Index the rest of a long recording in slices of at most INDEX_SLICE seconds (the
        keys and paints work in between), then go where the person asked (the end, by
        default) unless they moved meanwhile."""
        replay = self.replay
        clock = time.perf_counter
        while not replay.timeline.complete:
            await asyncio.sleep(0)
            until = clock() + INDEX_SLICE
            folded = replay.timeline.index(INDEX_BITE)  # at least one bite a slice
            while folded < INDEX_STEP and not replay.timeline.complete and clock() < until:
                folded += replay.timeline.index(INDEX_BITE)
            self._paint()
        replay.total = replay.timeline.indexed  # what could actually be read
        if not replay.moved:
            self._move(replay.total if replay.wanted is None else min(replay.wanted, replay.total))
        else:
            self._paint()

    @property
    def playing(self) -> bool:
        return self._player is not None

    def status_text(self) -> str:
        return self.replay.status_text(self.playing)

    def _paint(self) -> None:
        self.update(Text(self.status_text()))

    def _move(self, n: int) -> None:
        if self.replay.move_to(n):
            self.post_message(self.Moved())
        self._paint()

    # -- the transport -----------------------------------------------------------------------
    def move_to(self, n: int) -> None:
        self._move(n)

    def step(self, delta: int) -> None:
        self.replay.moved = True
        self._stop_playing()
        self._move(self.replay.cursor + delta)

    def jump(self, where: int) -> None:
        replay = self.replay
        replay.moved = where >= 0 or replay.moved  # End while indexing: still "the end"
        if where < 0 and not replay.timeline.complete:
            replay.wanted = None
            self.notify("Still indexing: the end shows when it is done.", timeout=3)
        self._stop_playing()
        self._move(replay.total if where < 0 else where)

    def play(self) -> None:
        self.replay.moved = True
        if self.playing:
            self._stop_playing()
            return
        if self.replay.cursor >= self.replay.total:
            self._move(0)  # play from the start when at the end
        self._start_player()

    def faster(self, step: int) -> None:
        """One step faster (+1) or slower (-1) along SPEEDS; a playing replay keeps playing."""
        replay = self.replay
        i = SPEEDS.index(replay.speed) if replay.speed in SPEEDS else SPEEDS.index(1.0)
        replay.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + step))]
        if self._player is not None:
            self._start_player()
        else:
            self._paint()

    def _start_player(self) -> None:
        self._schedule()
        self._paint()

    def _schedule(self) -> None:
        """The next tick, after the wait before the next event (real time: its recorded gap)."""
        if self._player is not None:
            self._player.stop()
        # never 0: Textual does not run a 0-second timer and divides by it when it is stopped
        # (playing from the start, whose first event has no gap before it, hung, then crashed)
        self._player = self.set_timer(max(MIN_TICK_S, self.replay.delay_before(self.replay.cursor)), self._tick)

    def _tick(self) -> None:
        replay = self.replay
        end = min(replay.total, replay.timeline.indexed)
        n = replay.cursor + 1
        # Events recorded together are shown together (real time: a burst is one step).
        while n < end and n - replay.cursor < 500 and replay.play_rate is None and replay.delay_before(n) < SAME_STEP_S:
            n += 1
        moved = False
        while replay.cursor < min(n, end):
            moved = replay.move_to(replay.cursor + 1) or moved
        if moved:
            self.post_message(self.Moved())
        if replay.cursor >= end:
            self._stop_playing()
            return
        self._schedule()
        self._paint()

    def jump_mark(self, direction: int) -> None:
        """To just after the next (1) or previous (-1) control, approval or failure."""
        replay = self.replay
        at = replay.mark(direction)
        if at is None:
            where = "after" if direction > 0 else "before"
            self.notify(f"No control, approval or failure {where} this point.", timeout=3)
            return
        replay.moved = True
        self._stop_playing()
        self._move(at)
        kind = replay.timeline.events[at - 1].WhichOneof("payload") or ""
        self.notify(f"event {at}: {kind.replace('_', ' ')}", timeout=2)

    def _stop_playing(self) -> None:
        if self._player is not None:
            self._player.stop()
            self._player = None
            self._paint()


#: What the app returns when the person asks for the list of recorded runs again (b); the
#: replay command (goldfive.cli.local.BACK_TO_PICKER) shows the list then.
BACK_TO_PICKER = "back"
