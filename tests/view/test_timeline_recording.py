"""Timeline (state as of any event, from checkpoints) and open_recording (JSONL or SQLite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldfive.errors import ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.recording import detect_format, open_recording
from goldfive.view import RunState
from goldfive.sinks import SQLitePersistenceSink
from goldfive.sinks._json import message_to_json
from goldfive.timeline import Timeline
from tests.tui.scenario import DemoScript, flatten


def story(run_id: str = "3f9c2a7b41d04e5f", shift_ms: int = 0) -> list[Event]:
    script = DemoScript(run_id)
    script.clock.advance(shift_ms)
    return flatten(script.opening(), script.to_approval(task="draft"), script.finish())


@pytest.mark.parametrize("every", [1, 3, 1000])
def test_state_at_every_position_equals_folding_the_prefix(every: int) -> None:
    events = story()
    timeline = Timeline(events, every=every)
    for n in range(len(events) + 1):
        assert timeline.state_at(n) == RunState.from_events(events[:n]), n
    assert timeline.final == RunState.from_events(events)


def test_state_at_hands_out_copies_so_checkpoints_stay_intact() -> None:
    events = story()
    timeline = Timeline(events, every=2)
    first = timeline.state_at(4)
    for ev in events[4:]:
        first.apply(ev)
    assert timeline.state_at(4) == RunState.from_events(events[:4])


def test_a_checkpoint_is_kept_every_n_events() -> None:
    events = story()
    assert Timeline(events, every=5).checkpoints == 1 + len(events) // 5
    with pytest.raises(IndexError):
        Timeline(events).state_at(len(events) + 1)


async def write_sqlite(path: Path, *runs: list[Event]) -> None:
    sink = SQLitePersistenceSink(path)
    for events in runs:
        for ev in events:
            await sink.emit(ev)
    await sink.close()


async def test_sqlite_with_several_runs_opens_the_latest_and_says_so(tmp_path: Path) -> None:
    old, new = story("run-old"), story("run-new", shift_ms=60_000)
    path = tmp_path / "runs.db"  # not named .sqlite: detected by its header
    await write_sqlite(path, new, old)
    assert detect_format(path) == "sqlite"
    rec = open_recording(path)
    assert rec.format == "sqlite" and rec.run_id == "run-new" and len(rec.events) == len(new)
    assert "2 runs" in rec.note and "run-new" in rec.note
    assert open_recording(path, "run-old").run_id == "run-old"
    with pytest.raises(ReplayError, match="no run 'nope'"):
        open_recording(path, "nope")


def test_jsonl_opens_with_skipped_lines_counted(tmp_path: Path) -> None:
    events = story()
    path = tmp_path / "run.log"
    lines = [message_to_json(ev) for ev in events]
    lines.insert(3, "{not json")
    path.write_text("\n".join(lines) + "\n" + '{"eventId": "torn')
    rec = open_recording(path)
    assert rec.format == "jsonl" and rec.skipped == 2 and len(rec.events) == len(events)
    assert rec.errors[0].startswith("line 4:") and "torn" in rec.errors[1]


def test_a_missing_recording_is_a_replay_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="no recording"):
        open_recording(tmp_path / "missing.jsonl")
