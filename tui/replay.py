"""ReplayApp: a recorded run, read-only, with a cursor over its events.

The main screen is GoldfiveApp's; the plan, approvals, header and event log show the run as
of the cursor. Stepping forward applies one event; any other move rebuilds the state from
the Timeline's nearest checkpoint. Log lines are formatted only when drawn (``_LogLines``), so
a 100,000-event recording opens as fast as it can be read. Every control key is refused.
"""

from __future__ import annotations

import asyncio
import bisect
from typing import AsyncIterator, ClassVar, Sequence, overload

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.timer import Timer
from textual.widgets import Footer, Input, Static

from goldfive.control import AckResult, ControlAck, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.recording import Recording
from goldfive.timeline import Timeline
from .app import GoldfiveApp
from .format import LogLine, clock_text, describe
from .widgets.eventlog import EventLog, _matches

__all__ = ["ReplayApp"]

PLAY_RATE = 20.0  # events per second while playing at 1x
#: Play speeds, slowest first; ``+`` / ``-`` move along them.
SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
SCRUB_CELLS = 24
#: A recording up to this many events is indexed before the app opens; a longer one opens at
#: once (its first INDEX_STEP events) and is indexed in the background, INDEX_STEP at a time.
INDEX_NOW = 50_000
INDEX_STEP = 20_000
#: How much of a long recording is folded before its first screen.
FIRST_SCREEN = 2_000
_CURSOR_ACTIONS = frozenset({"step", "jump", "play", "speed"})
READ_ONLY = "Replay is read-only: {what} does nothing here (use ← → space + - home end)."


class _LogLines(Sequence[LogLine]):
    """The first ``limit`` event log lines of the recording, each built on first access."""

    def __init__(self, events: Sequence[Event], started_ms: int) -> None:
        self._events = events
        self._started_ms = started_ms
        self._cache: list[LogLine | None] = [None] * len(events)
        self.limit = len(events)

    def _line(self, i: int) -> LogLine:
        line = self._cache[i]
        if line is None:
            ev = self._events[i]
            label, text, style = describe(ev)
            at = clock_text(ev.emitted_at.ToMilliseconds() - self._started_ms) if self._started_ms else "--:--"
            line = self._cache[i] = LogLine(at, label, text, style, ev)  # Enter opens the event whole
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


def _show_lines(log: EventLog, lines: _LogLines, before: int) -> None:
    """Point the log at the first ``lines.limit`` lines (``before`` were shown until now).

    EventLog is built for appending; here the view also shrinks, so its filter index is kept
    in step by hand: extended for new lines, cut at the cursor for removed ones (a step with
    a filter on 100,000 lines stays O(step), not O(lines)).
    """
    log.lines = lines  # type: ignore[assignment]  # a read-only view, never appended to
    shown = log._shown
    if shown is not None:
        after = lines.limit
        if after >= before:
            needle = log.filter_text.lower()
            shown.extend(i for i in range(before, after) if _matches(lines[i], needle))
        else:
            del shown[bisect.bisect_left(shown, after) :]
    log.new_lines = 0
    log._pending = True  # flushed by the app's throttled repaint


class _NoSource:
    """A recording has no live stream and accepts no controls."""

    def __init__(self, title: str) -> None:
        self.title = title

    async def events(self) -> AsyncIterator[Event]:
        return
        yield  # pragma: no cover

    async def send(self, msg: ControlMessage) -> ControlAck:
        return ControlAck(msg.id, AckResult.UNSUPPORTED, "replay is read-only")

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None


class ReplayBar(Static):
    DEFAULT_CSS = """
    ReplayBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """


class ReplayApp(GoldfiveApp):
    """``recording`` opens at ``start_at`` events applied (default: the end, the final state)."""

    # Control keys stay bound (so they can be refused with a message) but leave the footer.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "pause", "Pause", show=False, id="pause"),
        Binding("s", "steer", "Steer", show=False, id="steer"),
        Binding("w", "rewind", "Rewind", show=False, id="rewind"),
        Binding("a", "approve", "Approve", show=False, id="approve"),
        Binding("x", "reject", "Reject", show=False, id="reject"),
        Binding("i", "inject", "Inject", show=False, id="inject"),
        Binding("c", "cancel_run", "Cancel", show=False, id="cancel"),
        Binding("left,comma", "step(-1)", "Back", key_display="←", priority=True, tooltip="Step back one event (← or ,)", id="replay.back"),
        Binding("right,full_stop", "step(1)", "Forward", key_display="→", priority=True, tooltip="Step forward one event (→ or .)", id="replay.forward"),
        Binding("space", "play", "Play/pause", key_display="space", priority=True, tooltip="Play the recording at a steady rate; again to pause", id="replay.play"),
        Binding("home", "jump(0)", "Start", show=False, priority=True, tooltip="Jump to the start of the recording", id="replay.start"),
        Binding("end", "jump(-1)", "End", show=False, priority=True, tooltip="Jump to the end of the recording", id="replay.end"),
        Binding("plus,equals_sign", "speed(1)", "Faster", key_display="+", priority=True, tooltip="Play faster (up to 16x)", id="replay.faster"),
        Binding("minus", "speed(-1)", "Slower", key_display="-", priority=True, tooltip="Play slower (down to 0.5x)", id="replay.slower"),
    ]  # fmt: skip
    _REPLAY_ACTIONS = ("step(-1)", "step(1)", "play", "jump(0)", "jump(-1)", "speed(1)", "speed(-1)")

    def __init__(
        self,
        recording: Recording,
        *,
        start_at: int | None = None,
        play_rate: float = PLAY_RATE,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__(_NoSource(recording.path), cursor_blink=cursor_blink)
        self.recording = recording
        self.total = len(recording.events)
        self.timeline = Timeline(recording.events, index_now=self.total <= INDEX_NOW)
        if not self.timeline.complete:
            self.timeline.index(FIRST_SCREEN)
        self.play_rate = play_rate
        self.speed = 1.0
        #: Where the person asked to be: the end (None) is reached once indexing is done.
        self._wanted = start_at
        self.cursor = min(self.timeline.indexed, self.total if start_at is None else max(0, min(start_at, self.total)))
        self.state = self.timeline.state_at(self.cursor)
        self._lines = _LogLines(recording.events, self.timeline.final.started_ms)
        self._player: Timer | None = None
        self._moved = False

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, Footer):
                yield ReplayBar(id="replay-status")
            yield widget

    async def _consume(self) -> None:
        """Nothing streams in a replay: show the cursor's state, then index the rest of a long
        recording a step at a time (the keys work in between), and go where the person asked
        (the end, by default) unless they moved meanwhile."""
        self._show_cursor()
        while not self.timeline.complete:
            await asyncio.sleep(0)
            self.timeline.index(INDEX_STEP)
            self.query_one(ReplayBar).update(Text(self.status_text()))
        self.total = self.timeline.indexed  # what could actually be read
        if not self._moved:
            target = self.total if self._wanted is None else min(self._wanted, self.total)
            self.move_to(target)
        else:
            self.query_one(ReplayBar).update(Text(self.status_text()))

    # -- the cursor --------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self._player is not None

    def scrubber(self) -> str:
        """Where the cursor is in the recording: a bar of SCRUB_CELLS cells and a percentage."""
        frac = self.cursor / self.total if self.total else 1.0
        filled = round(frac * SCRUB_CELLS)
        return f"{'█' * filled}{'░' * (SCRUB_CELLS - filled)} {frac:4.0%}"

    def status_text(self) -> str:
        parts = [f"replay  {self.scrubber()}  event {self.cursor}/{self.total}"]
        if not self.timeline.complete:
            parts.append(f"indexing {self.timeline.indexed / max(1, self.total):.0%}")
        if self.recording.skipped:
            noun = "line" if self.recording.skipped == 1 else "lines"
            parts.append(f"({self.recording.skipped} {noun} skipped)")
        damaged = getattr(self.recording.events, "damaged", 0)
        if damaged:
            parts.append(f"({damaged} damaged {'event' if damaged == 1 else 'events'} shown empty)")
        parts.append(f"▶ playing {self.speed:g}x" if self.playing else f"⏸ paused ({self.speed:g}x)")
        if self.recording.note:
            parts.append(self.recording.note)
        return "  ".join(parts)

    def move_to(self, n: int) -> None:
        """Show the run as of ``n`` events applied (clamped to the recording, and to what is
        indexed so far)."""
        n = max(0, min(n, self.total, self.timeline.indexed))
        if n == self.cursor:
            return
        if n == self.cursor + 1:
            self.state.apply(self.timeline.events[self.cursor])
        else:
            self.state = self.timeline.state_at(n)
        self.cursor = n
        self._show_cursor()

    def _show_cursor(self) -> None:
        shown_before = self._lines.limit
        self._lines.limit = self.cursor
        _show_lines(self.query_one(EventLog), self._lines, shown_before)
        self.query_one(ReplayBar).update(Text(self.status_text()))
        self._dirty = True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Keys typed into an input (the log filter) are text, never replay moves.
        if action in _CURSOR_ACTIONS and isinstance(self.focused, Input):
            return False
        return super().check_action(action, parameters)

    def action_step(self, delta: int) -> None:
        self._moved = True
        self._stop_playing()
        self.move_to(self.cursor + delta)

    def action_jump(self, where: int) -> None:
        self._moved = where >= 0 or self._moved  # End while indexing: still "the end"
        if where < 0 and not self.timeline.complete:
            self._wanted = None
            self.notify("Still indexing: the end shows when it is done.", timeout=3)
        self._stop_playing()
        self.move_to(self.total if where < 0 else where)

    def action_play(self) -> None:
        self._moved = True
        if self.playing:
            self._stop_playing()
            return
        if self.cursor >= self.total:
            self.move_to(0)  # play from the start when at the end
        self._start_player()

    def _start_player(self) -> None:
        self._player = self.set_interval(1 / (self.play_rate * self.speed), self._tick)
        self.query_one(ReplayBar).update(Text(self.status_text()))

    def action_speed(self, step: int) -> None:
        """One step faster (+1) or slower (-1) along SPEEDS; a playing replay keeps playing."""
        i = SPEEDS.index(self.speed) if self.speed in SPEEDS else SPEEDS.index(1.0)
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + step))]
        if self._player is not None:
            self._player.stop()
            self._start_player()
        else:
            self.query_one(ReplayBar).update(Text(self.status_text()))

    def _tick(self) -> None:
        self.move_to(self.cursor + 1)
        if self.cursor >= min(self.total, self.timeline.indexed):
            self._stop_playing()

    def _stop_playing(self) -> None:
        if self._player is not None:
            self._player.stop()
            self._player = None
            self.query_one(ReplayBar).update(Text(self.status_text()))

    def action_bindings(self) -> list[Binding]:
        """Help and the command palette offer the replay moves, not the controls."""
        mine = [b for b in self.BINDINGS if isinstance(b, Binding) and b.action in self._REPLAY_ACTIONS]
        rest = [b for b in GoldfiveApp.BINDINGS if isinstance(b, Binding) and b.action in ("filter", "help", "quit")]
        return mine + rest

    # -- read-only: every control is refused -----------------------------------------------------
    def _refuse(self, what: str) -> None:
        self.notify(READ_ONLY.format(what=what), title="read-only", severity="warning")

    def action_pause(self) -> None:
        self._refuse("pause/resume")

    def action_resume(self) -> None:
        self._refuse("pause/resume")

    def action_steer(self) -> None:
        self._refuse("steer")

    def action_rewind(self) -> None:
        self._refuse("rewind")

    def action_approve(self) -> None:
        self._refuse("approve")

    def action_reject(self) -> None:
        self._refuse("reject")

    def action_inject(self) -> None:
        self._refuse("inject")

    def action_cancel_run(self) -> None:
        self._refuse("cancel")
