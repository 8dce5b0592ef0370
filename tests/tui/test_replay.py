"""Replay: the run screen on a recording, read-only, with a cursor; the panes show the run as of
the cursor."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.recording import Recording, open_recording
from goldfive.view import RunPhase, RunState
from goldfive.sinks._json import message_to_json
from goldfive.types import TaskStatus
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.format import describe
from goldfive_tui.replay import PLAY_RATE, Replay, ReplayBar
from goldfive_tui.run import replay_screen
from goldfive_tui.run.screen import RunScreen
from tests.tui.conftest import screen_text, toasts_stay
from tests.tui.scenario import DemoScript, flatten
from goldfive_tui.widgets.approvals import ApprovalsView
from goldfive_tui.widgets.eventlog import EventLog
from goldfive_tui.widgets.plan import PlanView

SIZE = (120, 40)


def replay_app(recording: Recording, *, start_at: int | None = None, play_rate: float = PLAY_RATE, cursor_blink: bool = False) -> GoldfiveApp:
    """What ``goldfive replay`` opens: the app on a read-only run screen with the transport."""
    return GoldfiveApp(replay_screen(recording, start_at=start_at, play_rate=play_rate), cursor_blink=cursor_blink)


def screen_of(app: GoldfiveApp) -> RunScreen:
    assert isinstance(app.home, RunScreen)
    return app.home


def replay_of(app: GoldfiveApp) -> Replay:
    replay = screen_of(app).replay
    assert replay is not None
    return replay


def bar_of(app: GoldfiveApp) -> ReplayBar:
    return screen_of(app).query_one(ReplayBar)


def story() -> list[Event]:
    """The demo story, deterministic (fixed run id and Session clock)."""
    script = DemoScript()
    return flatten(script.opening(), script.to_approval(task="draft"), script.finish())


def write_jsonl(path: Path, events: list[Event], torn_tail: str = "") -> Path:
    path.write_text("".join(message_to_json(ev) + "\n" for ev in events) + torn_tail)
    return path


def index_of(events: list[Event], kind: str, task_id: str = "") -> int:
    for i, ev in enumerate(events):
        if ev.WhichOneof("payload") == kind and (not task_id or getattr(ev, kind).task_id == task_id):
            return i
    raise AssertionError(f"no {kind} {task_id}")


def statuses(app: GoldfiveApp) -> dict[str, TaskStatus]:
    return {tid: t.status for tid, t in screen_of(app).state.tasks.items()}


def plan_rows(app: GoldfiveApp) -> list[str]:
    return [row.plain for row in app.query_one(PlanView)._rows]


async def settle(app: GoldfiveApp, pilot: Pilot) -> None:
    await pilot.pause()
    screen_of(app).repaint()
    await pilot.pause()


async def test_a_torn_last_line_is_skipped_and_the_count_shown(tmp_path: Path) -> None:
    events = story()
    path = write_jsonl(tmp_path / "run.jsonl", events, torn_tail='{"eventId":"x","runId":"3f9c')
    recording = open_recording(path)
    assert recording.skipped == 1 and len(recording.events) == len(events)
    app = replay_app(recording)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        bar = str(app.query_one(ReplayBar).render())
        assert f"event {len(events)}/{len(events)}" in bar
        assert "(1 line skipped)" in bar


async def test_stepping_forward_and_back_changes_the_plan_shown() -> None:
    events = story()
    done = index_of(events, "task_completed", "research")  # research completes at done + 1 events
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=done)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert statuses(app)["research"] == TaskStatus.RUNNING
        assert plan_rows(app)[0].lstrip().startswith("◐")
        await pilot.press("right")
        await settle(app, pilot)
        assert replay_of(app).cursor == done + 1
        assert statuses(app)["research"] == TaskStatus.COMPLETED
        assert plan_rows(app)[0].lstrip().startswith("●")
        assert app.query_one(EventLog).shown_count == done + 1
        await pilot.press("left", "comma")  # two back: a rebuild from the checkpoint
        await settle(app, pilot)
        assert replay_of(app).cursor == done - 1
        assert statuses(app)["research"] == TaskStatus.RUNNING
        assert screen_of(app).state == RunState.from_events(events[: done - 1])
        assert app.query_one(EventLog).shown_count == done - 1
        await pilot.press("full_stop")
        await settle(app, pilot)
        assert replay_of(app).cursor == done


async def test_home_shows_the_start_and_end_shows_the_final_state() -> None:
    events = story()
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=5)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("home")
        await settle(app, pilot)
        assert replay_of(app).cursor == 0 and screen_of(app).state.tasks == {}
        await pilot.press("end")
        await settle(app, pilot)
        assert replay_of(app).cursor == len(events)
        assert screen_of(app).state.phase == RunPhase.COMPLETED
        assert set(statuses(app).values()) == {TaskStatus.COMPLETED}
        assert screen_of(app).state == RunState.from_events(events)
        assert "COMPLETED" in str(app.query_one("#header").render())


async def test_approvals_are_shown_as_of_the_cursor() -> None:
    events = story()
    asked = index_of(events, "approval_requested")
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=asked + 1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.query_one(ApprovalsView).selected_key == "publish_deck"
        await pilot.press("end")
        await settle(app, pilot)
        assert app.query_one(ApprovalsView).selected_key is None


async def test_control_keys_are_refused_as_read_only() -> None:
    events = story()
    asked = index_of(events, "approval_requested")
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=asked + 1)
    said: list[str] = []
    original = app.notify
    app.notify = lambda message, **kw: (said.append(message), original(message, **kw))[1]  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        before = statuses(app)
        for key in ("p", "a", "s", "c", "w", "x", "i"):
            await pilot.press(key)
        await settle(app, pilot)
        assert len(said) == 7 and all("read-only" in m for m in said)
        assert len(app.screen_stack) == 1  # no steer prompt, no confirmation
        assert statuses(app) == before and replay_of(app).cursor == asked + 1
        assert "publish_deck" in screen_of(app).state.approvals


async def test_space_plays_and_pauses_and_playing_stops_at_the_end() -> None:
    events = story()
    # A slow rate: the test drives the ticks itself.
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=len(events) - 1, play_rate=0.01)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        assert bar_of(app).playing
        assert "▶ playing" in bar_of(app).status_text()
        bar_of(app)._tick()  # what the interval does, without waiting for it
        assert replay_of(app).cursor == len(events) and not bar_of(app).playing
        await pilot.press("space")  # at the end: plays again from the start
        assert bar_of(app).playing and replay_of(app).cursor == 0
        await pilot.press("space")
        assert not bar_of(app).playing and "⏸ paused" in bar_of(app).status_text()


async def test_keys_typed_into_the_filter_do_not_move_the_cursor() -> None:
    events = story()
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=8)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"task", "space", "backspace", "left", "home", "end")
        await settle(app, pilot)
        assert isinstance(app.focused, Input)
        assert app.query_one("#filter", Input).value == "task"
        assert replay_of(app).cursor == 8 and not bar_of(app).playing
        log = app.query_one(EventLog)
        expected = [describe(ev) for ev in events[:8]]
        expected = [d for d in expected if "task" in d[0].lower() or "task" in d[1].lower()]
        assert 0 < log.shown_count == len(expected) < 8
        await pilot.press("enter", "right")  # the filter stays; the cursor moves again
        await settle(app, pilot)
        assert replay_of(app).cursor == 9
        lines = [describe(ev) for ev in events[:9]]
        assert log.shown_count == sum(1 for d in lines if "task" in d[0].lower() or "task" in d[1].lower())
        for key, at in (("left", 8), ("left", 7), ("home", 0), ("end", len(events)), ("comma", len(events) - 1)):
            await pilot.press(key)
            await settle(app, pilot)
            assert replay_of(app).cursor == at
            wanted = [i for i, ev in enumerate(events[:at]) if any("task" in part.lower() for part in describe(ev)[:2])]
            assert log.shown_lines() == [log.lines[i] for i in wanted]


def test_snapshot_replay_at_a_cursor(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """The story paused at its approval request, with one unreadable line reported."""
    events = story()
    asked = index_of(events, "approval_requested")
    recording = Recording("run.jsonl", "jsonl", events[0].run_id, events, skipped=1, errors=["line 17: torn"])
    app = replay_app(recording, start_at=asked + 1)

    async def run_before(pilot: Pilot) -> None:
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_help_offers_the_replay_moves_and_not_the_controls() -> None:
    app = replay_app(Recording("story", "jsonl", "r", story()))
    actions = [b.action for b in screen_of(app).offered_bindings()]
    assert actions[:5] == ["step(-1)", "step(1)", "play", "jump(0)", "jump(-1)"]
    assert "steer" not in actions and "pause" not in actions
    assert actions[-2:] == ["help", "quit"]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert len(app.screen_stack) == 2  # the help screen opened


def _spaced(events: list[Event], gaps_ms: list[int]) -> list[Event]:
    """Copies of ``events`` emitted ``gaps_ms`` apart (the last gap repeats)."""
    out, at = [], events[0].emitted_at.ToMilliseconds()
    for i, ev in enumerate(events):
        copy = Event()
        copy.CopyFrom(ev)
        at += gaps_ms[min(i, len(gaps_ms) - 1)] if i else 0
        copy.emitted_at.FromMilliseconds(at)
        out.append(copy)
    return out


def test_real_time_waits_the_recorded_gap_capped_at_two_seconds_and_a_speed_divides_it() -> None:
    from goldfive_tui.replay import MAX_GAP_MS

    events = _spaced(story(), [0, 300, 0, 45_000, 120])
    replay = Replay(Recording("story", "jsonl", "r", events), start_at=0)
    assert replay.play_rate is None  # real time is the default
    assert [replay.delay_before(n) for n in (1, 2, 3, 4)] == [0.3, 0.0, MAX_GAP_MS / 1000, 0.12]
    replay.speed = 4.0
    assert replay.delay_before(1) == 0.075 and replay.delay_before(3) == 0.5
    assert "paused (4x real time)" in replay.status_text(False)


async def test_playing_in_real_time_shows_events_recorded_together_in_one_step() -> None:
    events = _spaced(story(), [0, 2000, 0, 0, 0, 2000])
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        bar = bar_of(app)
        assert bar.playing and "playing 1x real time" in bar.status_text()
        for _ in range(100):  # event 0 at once (nothing before it); event 1 comes 2 s later
            if replay_of(app).cursor:
                break
            await pilot.pause(0.01)
        assert replay_of(app).cursor == 1
        bar._tick()  # event 1, and 2, 3, 4 recorded at the same moment: one step
        assert replay_of(app).cursor == 5 and bar.playing
        await pilot.press("space")
        assert not bar.playing


async def test_brackets_jump_to_the_next_and_previous_control_approval_or_failure() -> None:
    from goldfive.control import ControlKind, ControlMessage

    script = DemoScript()
    events = flatten(script.opening(), script.control(ControlMessage(kind=ControlKind.PAUSE, payload={})), script.to_approval(task="draft"))
    control = index_of(events, "control_received")
    asked = index_of(events, "approval_requested")
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=0)
    toasts_stay(app)  # what a jump says is read from its toast (2-3 s) after two settles
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert replay_of(app).cursor == control + 1  # the state just after the control
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert replay_of(app).cursor == asked + 1 and "approval requested" in screen_text(app)
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert replay_of(app).cursor == control + 1
        await pilot.press("end", "right_square_bracket")
        await settle(app, pilot)
        assert replay_of(app).cursor == len(events) and "No control, approval or failure after this point" in screen_text(app)


async def test_a_control_is_one_line_as_live_waiting_for_its_ack_until_the_cursor_passes_it() -> None:
    """Issue 23 (low): replay showed a control as two raw lines (control_received and
    control_acked); live it is one line, rewritten by its ack. An ack whose control is not in
    the recording keeps its own line."""
    from goldfive import events as E
    from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage

    script = DemoScript()
    pause = ControlMessage(kind=ControlKind.PAUSE, payload={"author": "alice"})
    orphan = E.control_acked(script.session, ControlAck("elsewhere", AckResult.SUCCESS, "resumed"), "RESUME")
    events = flatten(script.opening(), script.control(pause), [orphan], script.to_approval(task="draft"))
    received, acked = index_of(events, "control_received"), index_of(events, "control_acked")
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=received + 1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        log = app.query_one(EventLog)
        assert log.lines[-1].label == "control" and log.lines[-1].text == "PAUSE by alice received, waiting for the ack"
        assert len(log.lines) == received + 1
        replay_of(app).move_to(acked + 1)
        screen_of(app)._show_replay()
        await settle(app, pilot)
        texts = [line.text for line in log.lines]
        assert len(log.lines) == acked  # the ack has no line of its own
        assert texts[received] == "PAUSE by alice → SUCCESS" and log.lines[received].style == "ack-ok"
        await pilot.press("end")
        await settle(app, pilot)
        texts = [line.text for line in log.lines]
        assert len(log.lines) == len(events) - 1 and sum(t.startswith("PAUSE") for t in texts) == 1
        assert any(t.startswith("RESUME") and "SUCCESS" in t for t in texts)  # the orphan ack: its own line
        await pilot.press("home")
        await settle(app, pilot)
        assert len(log.lines) == 0


async def test_playing_from_the_start_in_real_time_moves_and_stops_cleanly() -> None:
    """The trial (`goldfive replay`, Home, space, then b): event 0 has no gap before it, so
    the player set a 0-second timer, which Textual never ran (the bar stayed at event 0,
    playing) and which raised ZeroDivisionError when stopped, killing the app."""
    events = _spaced(story(), [0, 20, 2000])  # events 0 and 1 at once, then a 2 s wait
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        for _ in range(100):
            await pilot.pause(0.01)
            if replay_of(app).cursor >= 2:
                break
        assert replay_of(app).cursor >= 2 and bar_of(app).playing
        await pilot.press("space")
        assert not bar_of(app).playing
    assert app.return_code in (None, 0)
