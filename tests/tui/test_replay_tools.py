"""Replay's tools: speed keys, the scrubber, Enter opens an event whole, the run picker, and
--run-id taking a unique prefix as ctl does."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from goldfive import events as E
from goldfive.cli import FRONTENDS, main
from goldfive.errors import ReplayError
from goldfive.recording import Recording, match_run, recorded_run_choices
from goldfive.sinks.sqlite import SQLitePersistenceSink
from goldfive.types import Session
from goldfive_tui.pick_run import RunPickerApp
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.replay import SCRUB_CELLS, ReplayBar
from goldfive_tui.screens.detail import EventScreen
from goldfive_tui.widgets.eventlog import EventLog

from tests.tui.conftest import screen_text

from .test_replay import SIZE, bar_of, replay_app, replay_of, screen_of, settle, story


def bar(app: GoldfiveApp) -> str:
    return str(app.query_one(ReplayBar).render())


async def test_plus_and_minus_change_the_play_speed_within_half_to_sixty_four() -> None:
    # A slow base rate: playing must not reach the end (and stop) while the test looks at it.
    app = replay_app(Recording("story", "jsonl", "r", story()), start_at=0, play_rate=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "(1x)" in bar(app)
        await pilot.press("plus", "plus")
        assert replay_of(app).speed == 4.0 and "(4x)" in bar(app)
        await pilot.press(*["plus"] * 5)
        assert replay_of(app).speed == 64.0
        await pilot.press(*["minus"] * 9)
        assert replay_of(app).speed == 0.5 and "(0.5x)" in bar(app)
        await pilot.press("space")
        assert "playing 0.5x" in bar(app)
        await pilot.press("plus")
        assert bar_of(app).playing and "playing 1x" in bar(app)


async def test_the_scrubber_shows_the_position() -> None:
    events = story()
    app = replay_app(Recording("story", "jsonl", "r", events), start_at=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "░" * SCRUB_CELLS + "   0%" in bar(app)
        await pilot.press("end")
        assert "█" * SCRUB_CELLS + " 100%" in bar(app)
        bar_of(app).move_to(len(events) // 2)
        await settle(app, pilot)
        assert "█" * (SCRUB_CELLS // 2) in bar(app) and "░" in bar(app)


async def test_enter_on_a_replayed_event_opens_it_whole() -> None:
    app = replay_app(Recording("story", "jsonl", "r", story()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        log = app.query_one(EventLog)
        log.focus()
        await pilot.press("g", "enter")
        await pilot.pause()
        assert isinstance(app.screen, EventScreen)
        assert app.screen.event is not None and app.screen.event.WhichOneof("payload") == "run_started"


def _record(db: Path, run_id: str, goal: str, *, finish: bool, clock_start: int) -> None:
    import asyncio

    clock = iter(range(clock_start, clock_start + 10_000, 10))
    s = Session(run_id=run_id, clock=lambda: next(clock))

    async def go() -> None:
        sink = SQLitePersistenceSink(str(db))
        await sink.emit(E.run_started(s, goal_summary=goal))
        await sink.emit(E.task_started(s, "t1"))
        if finish:
            await sink.emit(E.run_completed(s, "done"))
        await sink.close()

    asyncio.run(go())


def test_choices_list_state_and_goal_newest_first(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    _record(db, "aaaa1111", "write a haiku", finish=True, clock_start=1_000_000)
    _record(db, "bbbb2222", "fix the bug", finish=False, clock_start=2_000_000)
    choices = recorded_run_choices(db)
    assert [(c.run_id, c.state, c.goal, c.events) for c in choices] == [
        ("bbbb2222", "INTERRUPTED", "fix the bug", 2),
        ("aaaa1111", "COMPLETED", "write a haiku", 3),
    ]


async def test_the_picker_returns_the_chosen_run_or_none(tmp_path: Path) -> None:
    import asyncio

    db = tmp_path / "runs.sqlite"
    await asyncio.to_thread(_record, db, "aaaa1111", "write a haiku", finish=True, clock_start=1_000_000)
    await asyncio.to_thread(_record, db, "bbbb2222", "fix the bug", finish=False, clock_start=2_000_000)
    app = RunPickerApp(str(db), recorded_run_choices(db))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("j", "enter")
    assert app.return_value == "aaaa1111"
    app = RunPickerApp(str(db), recorded_run_choices(db))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("escape")
    assert app.return_value is None


def test_replay_without_run_id_asks_the_picker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "runs.sqlite"
    _record(db, "aaaa1111", "write a haiku", finish=True, clock_start=1_000_000)
    _record(db, "bbbb2222", "fix the bug", finish=False, clock_start=2_000_000)
    asked: list[list[str]] = []
    opened: list[str] = []
    monkeypatch.setitem(FRONTENDS, "pick_run", lambda path, choices: asked.append([c.run_id for c in choices]) or "aaaa1111")
    monkeypatch.setitem(FRONTENDS, "replay", lambda recording, back=False: opened.append(recording.run_id))
    out = CliRunner().invoke(main, ["replay", str(db)])
    assert out.exit_code == 0, out.output
    assert asked == [["bbbb2222", "aaaa1111"]] and opened == ["aaaa1111"]
    out = CliRunner().invoke(main, ["replay", str(db), "--run-id", "bbbb"])  # a prefix, as ctl takes
    assert out.exit_code == 0 and opened[-1] == "bbbb2222" and len(asked) == 1


def test_replay_without_file_lists_the_runs_recorded_here_and_b_comes_back_to_the_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldfive.cli.local import BACK_TO_PICKER
    from goldfive_tui.replay import BACK_TO_PICKER as TUI_BACK

    assert BACK_TO_PICKER == TUI_BACK
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    out = CliRunner().invoke(main, ["replay"])
    assert out.exit_code == 2 and "no runs recorded here yet" in out.output and "goldfive demo" in out.output
    db = tmp_path / "runs.sqlite"
    _record(db, "aaaa1111", "write a haiku", finish=True, clock_start=1_000_000)
    _record(db, "bbbb2222", "fix the bug", finish=False, clock_start=2_000_000)
    picks = iter(["aaaa1111", "bbbb2222", None])
    opened: list[tuple[str, bool]] = []
    monkeypatch.setitem(FRONTENDS, "pick_run", lambda path, choices: next(picks))
    monkeypatch.setitem(FRONTENDS, "replay", lambda recording, back=False: opened.append((recording.run_id, back)) or BACK_TO_PICKER)
    out = CliRunner().invoke(main, ["replay"])
    assert out.exit_code == 0, out.output
    assert opened == [("aaaa1111", True), ("bbbb2222", True)]  # b went back each time; Esc in the list ended it
    opened.clear()
    out = CliRunner().invoke(main, ["replay", "--run-id", "bbbb"])  # named: no list, and b is not offered
    assert out.exit_code == 0 and opened == [("bbbb2222", False)]


async def test_b_in_a_replay_picked_from_the_list_returns_to_it_and_is_not_offered_otherwise() -> None:
    from goldfive_tui.replay import BACK_TO_PICKER
    from goldfive_tui.run import replay_screen

    app = GoldfiveApp(replay_screen(Recording("story", "jsonl", "r", story()), back=True), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "b Runs" in screen_text(app)
        await pilot.press("b")
        await pilot.pause()
    assert app.return_value == BACK_TO_PICKER
    app = replay_app(Recording("story", "jsonl", "r", story()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "b Runs" not in screen_text(app)
        await pilot.press("b")
        await pilot.pause()
        assert app.is_running


async def test_slash_filters_the_picker_and_esc_clears_it(tmp_path: Path) -> None:
    import asyncio

    db = tmp_path / "runs.sqlite"
    await asyncio.to_thread(_record, db, "aaaa1111", "write a haiku", finish=True, clock_start=1_000_000)
    await asyncio.to_thread(_record, db, "bbbb2222", "fix the bug", finish=False, clock_start=2_000_000)
    app = RunPickerApp(str(db), recorded_run_choices(db))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"haik")
        await pilot.pause()
        assert [c.run_id for c in app.choices] == ["aaaa1111"] and "1 of 2 runs" in str(app.query_one("#title").render())
        await pilot.press(*"zz")
        await pilot.pause()
        assert app.choices == [] and "none match" in str(app.query_one("#title").render())
        await pilot.press("escape")  # clears the filter, the picker stays
        await pilot.pause()
        assert len(app.choices) == 2 and app.is_running
        await pilot.press("slash", *"INTERR", "enter")  # Enter keeps the filter, goes to the rows
        await pilot.pause()
        await pilot.press("enter")
    assert app.return_value == "bbbb2222"


def test_prefix_rule() -> None:
    ids = ["abcd1234", "abcd9999", "ffff0000"]
    assert match_run(ids, "ffff", "f") == "ffff0000"
    assert match_run(ids, "abcd1234", "f") == "abcd1234"
    with pytest.raises(ReplayError, match="more than one run"):
        match_run(ids, "abcd", "f")
    with pytest.raises(ReplayError, match="4\\+ characters"):
        match_run(ids, "fff", "f")
    with pytest.raises(ReplayError, match="no run 'zzzz'"):
        match_run(ids, "zzzz", "f")


def _long_story(extra: int) -> list:  # type: ignore[type-arg]
    events = story()
    session = Session(run_id=events[0].run_id, clock=lambda: 1_767_225_700_000)
    session.continue_after(len(events) - 1)
    return events + [E.task_progress(session, "draft", detail=f"step {i}") for i in range(extra)]


async def test_a_long_recording_opens_at_once_and_reaches_the_end_when_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    import goldfive_tui.replay as replay

    monkeypatch.setattr(replay, "INDEX_NOW", 100)
    monkeypatch.setattr(replay, "INDEX_STEP", 60)
    monkeypatch.setattr(replay, "FIRST_SCREEN", 30)
    events = _long_story(400)
    app = replay_app(Recording("long", "jsonl", "r", events))
    assert replay_of(app).timeline.indexed == 30 and replay_of(app).cursor == 30  # opened before indexing the rest
    assert "indexing" in replay_of(app).status_text(False)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(100):
            await pilot.pause()
            if replay_of(app).timeline.complete and replay_of(app).cursor == len(events):
                break
        assert replay_of(app).timeline.complete and replay_of(app).cursor == len(events)
        assert "indexing" not in bar(app)
        assert screen_of(app).state.events == len(events)


async def test_the_first_screen_is_drawn_before_indexing_goes_on_and_indexing_gives_way_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long recording's first screen is not held up behind its indexing: the fold starts
    after the first refresh and gives the loop back every slice (it started in on_mount and
    folded 20,000 events at a time: 30 s to the first screen of a million events)."""
    import goldfive_tui.replay as replay

    monkeypatch.setattr(replay, "INDEX_NOW", 100)
    monkeypatch.setattr(replay, "FIRST_SCREEN", 30)
    monkeypatch.setattr(replay, "INDEX_BITE", 5)
    monkeypatch.setattr(replay, "INDEX_SLICE", 0.0)  # one bite a slice
    events = _long_story(2000)
    app = replay_app(Recording("long", "jsonl", "r", events))
    async with app.run_test(size=SIZE) as pilot:
        assert replay_of(app).timeline.indexed < len(events) // 2, "the first screen waited for the fold"
        assert "indexing" in bar(app)
        for _ in range(100):
            await pilot.pause()
            if replay_of(app).timeline.complete and replay_of(app).cursor == len(events):
                break
        assert replay_of(app).timeline.complete and replay_of(app).cursor == len(events)


async def test_moving_while_indexing_is_not_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    import goldfive_tui.replay as replay

    monkeypatch.setattr(replay, "INDEX_NOW", 100)
    monkeypatch.setattr(replay, "INDEX_STEP", 60)
    events = _long_story(400)
    app = replay_app(Recording("long", "jsonl", "r", events))
    async with app.run_test(size=SIZE) as pilot:
        screen_of(app).action_jump(0)  # the person went to the start while it indexed
        for _ in range(100):
            await pilot.pause()
            if replay_of(app).timeline.complete:
                break
        await pilot.pause()
        assert replay_of(app).timeline.complete and replay_of(app).cursor == 0


def test_replay_of_a_file_with_one_run_opens_it_at_once_and_b_lists_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldfive.cli.local import BACK_TO_PICKER

    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    _record(tmp_path / "runs.sqlite", "aaaa1111", "write a haiku", finish=True, clock_start=1_000_000)
    asked: list[list[str]] = []
    picks = iter(["aaaa1111", None])
    opened: list[tuple[str, bool]] = []
    monkeypatch.setitem(FRONTENDS, "pick_run", lambda path, choices: asked.append([c.run_id for c in choices]) or next(picks))
    monkeypatch.setitem(FRONTENDS, "replay", lambda recording, back=False: opened.append((recording.run_id, back)) or BACK_TO_PICKER)
    out = CliRunner().invoke(main, ["replay"])
    assert out.exit_code == 0, out.output
    # Opened at once with b offered; b listed the one run; picked again, then Esc in the list.
    assert opened == [("aaaa1111", True), ("aaaa1111", True)]
    assert asked == [["aaaa1111"], ["aaaa1111"]]


async def test_the_picker_gives_the_goal_the_width_at_60_columns() -> None:
    """At 60 columns the goal showed 6 characters (the trial): the narrow picker drops the start
    and the event count and shortens the id, so most of the goal is read."""
    from goldfive.recording import RunChoice
    from tests.tui.conftest import screen_text as text_of

    goal = "Write a six-slide deck on our Q3 results for the eng all-hands"
    choices = [RunChoice("3f9c0d2a8b7e6f5a", "COMPLETED", goal, 1_790_000_000_000, 1234)]
    app = RunPickerApp("runs.sqlite", choices)
    async with app.run_test(size=(60, 16)) as pilot:
        await pilot.pause()
        assert "Write a six-slide deck on our Q3" in text_of(app)
    async with RunPickerApp("runs.sqlite", choices).run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert "1234" in text_of(pilot.app) and goal in text_of(pilot.app)  # wide: every column
