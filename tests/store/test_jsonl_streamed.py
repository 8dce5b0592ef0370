"""A long JSONL recording opened for replay is scanned once and read a block at a time
(goldfive.store.jsonl): the same events as reading it whole, in the same positions, whatever
the file holds (several runs, interleaved; blank, stray, corrupt and torn lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

import goldfive.recording as recording
from goldfive import events as E
from goldfive.errors import ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.recording import open_recording
from goldfive.sinks.jsonl import encode_line, replay_from_jsonl
from goldfive.store.jsonl import JsonlEvents, scan_jsonl
from goldfive.types import Session

BLOCK = 600  # a few lines a block, so every test crosses many blocks


def run(run_id: str, n: int) -> list[Event]:
    clock = iter(range(1_000, 1_000 + 10 * (n + 5), 10))
    s = Session(run_id=run_id, clock=lambda: next(clock))
    out = [E.run_started(s, goal_summary=f"goal of {run_id}")]
    out += [E.task_progress(s, "t1", detail=f"step {i}") for i in range(n - 2)]
    out.append(E.run_completed(s, "done"))
    return out


def write(path: Path, lines: list[str], *, newline_at_end: bool = True) -> Path:
    path.write_text("\n".join(lines) + ("\n" if newline_at_end else ""), encoding="utf-8")
    return path


def wire(events: list[Event]) -> list[bytes]:
    return [e.SerializeToString() for e in events]


def streamed(path: Path, run_id: str | None = None) -> JsonlEvents:
    return JsonlEvents(scan_jsonl(path, run_id, block=BLOCK))


def test_a_streamed_run_is_the_run_read_whole(tmp_path: Path) -> None:
    events = run("run-one", 300)
    path = write(tmp_path / "one.jsonl", [encode_line(e) for e in events])
    got = streamed(path)
    assert len(got.scan.blocks) > 20
    assert len(got) == 300 and got.run_id == "run-one"
    assert wire(list(got)) == wire(replay_from_jsonl(path).events) == wire(events)
    assert got[0].run_started.goal_summary == "goal of run-one" and got[-1].HasField("run_completed")
    assert wire(list(got[150:153])) == wire(events[150:153])
    assert wire([got[i] for i in (299, 3, 250, 0, 42)]) == wire([events[i] for i in (299, 3, 250, 0, 42)])
    with pytest.raises(IndexError):
        got[300]
    assert got.damaged == 0


def test_several_runs_interleaved_the_last_by_default_another_by_prefix(tmp_path: Path) -> None:
    a, b = run("aaaa-first", 40), run("bbbb-second", 30)
    mixed = [x for pair in zip(a, b) for x in pair] + a[30:]  # a, b, a, b, ... then the rest of a
    path = write(tmp_path / "mixed.jsonl", [encode_line(e) for e in mixed])
    assert streamed(path).run_id == "aaaa-first"  # the last line's run
    assert wire(list(streamed(path, "bbbb"))) == wire(b)
    assert wire(list(streamed(path, "aaaa-first"))) == wire(a)
    with pytest.raises(ReplayError, match="no run 'cccc'"):
        streamed(path, "cccc")
    sequential = write(tmp_path / "two.jsonl", [encode_line(e) for e in a + b])
    assert wire(list(streamed(sequential))) == wire(b)
    assert wire(list(streamed(sequential, "aaaa"))) == wire(a)


def test_blank_stray_and_torn_lines_are_left_out_and_reported_a_bad_event_keeps_its_place(tmp_path: Path) -> None:
    events = run("run-damaged", 60)
    lines = [encode_line(e) for e in events]
    bad = lines[20].replace('"taskProgress":{', '"taskProgress":{"fraction":"lots",')  # its prefix is fine
    body = lines[:10] + ["", "   ", "not json at all"] + lines[10:20] + [bad] + lines[21:] + ['{"eventId":"run-dam']
    path = write(tmp_path / "damaged.jsonl", body, newline_at_end=False)
    got = streamed(path)
    assert len(got) == 60
    assert got.scan.skipped == 2  # the stray line and the torn last line
    assert got.scan.errors[0].startswith("line 13: corrupt line") and "torn last line" in got.scan.errors[1]
    assert wire(list(got[:20])) == wire(events[:20]) and wire(list(got[21:])) == wire(events[21:])
    assert got[20].WhichOneof("payload") is None and got.damaged == 1


def test_open_recording_streams_a_jsonl_file_over_the_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = run("aaaa-first", 20), run("bbbb-second", 25)
    path = write(tmp_path / "long.jsonl", [encode_line(e) for e in a + b])
    whole = open_recording(path)
    monkeypatch.setattr(recording, "STREAM_BYTES", 100)
    rec = open_recording(path)
    assert isinstance(rec.events, JsonlEvents) and not isinstance(whole.events, JsonlEvents)
    assert (rec.format, rec.run_id, rec.note) == (whole.format, whole.run_id, whole.note)
    assert "2 runs in long.jsonl; showing the last, bbbb-second" in rec.note
    assert wire(list(rec.events)) == wire(list(whole.events))
    assert wire(list(open_recording(path, "aaaa").events)) == wire(a)


def test_a_line_longer_than_a_block_is_read_whole(tmp_path: Path) -> None:
    events = run("run-long", 30)
    events[10].task_progress.detail = "x" * (5 * BLOCK)
    path = write(tmp_path / "long-line.jsonl", [encode_line(e) for e in events])
    got = streamed(path)
    assert len(got) == 30 and got.damaged == 0
    assert wire(list(got)) == wire(events)
