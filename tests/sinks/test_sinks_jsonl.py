"""JSONLPersistenceSink and replay_from_jsonl on real files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from goldfive import events
from goldfive.errors import GoldfiveError, ReplayError, SinkError
from goldfive.sinks import JSONLPersistenceSink, ReplayResult, replay_from_jsonl
from goldfive.sinks.jsonl import encode_line
from goldfive.types import Session


def _session(run_id: str = "r1") -> Session:
    return Session(run_id=run_id, clock=lambda: 1_700_000_000_000)


async def _record(path: Path, n: int, mode: str = "append", run_id: str = "r1") -> list:
    s = _session(run_id)
    sink = JSONLPersistenceSink(path, mode=mode)  # type: ignore[arg-type]
    evs = [events.run_started(s, goal_summary="g")] + [events.task_progress(s, "t", detail=str(i)) for i in range(n - 1)]
    for ev in evs:
        await sink.emit(ev)
    await sink.close()
    return evs


async def test_round_trip_returns_equal_events_one_json_object_per_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    evs = await _record(path, 5)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5 and all(isinstance(json.loads(line), dict) for line in lines)
    result = replay_from_jsonl(path)
    assert result == ReplayResult(events=evs, skipped=0, errors=[])


async def test_append_mode_keeps_earlier_runs_and_write_mode_replaces_them(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    first = await _record(path, 3, run_id="a")
    second = await _record(path, 2, mode="append", run_id="b")
    assert replay_from_jsonl(path).events == first + second
    third = await _record(path, 2, mode="write", run_id="c")
    assert replay_from_jsonl(path).events == third


def test_bad_mode_raises_value_error_naming_it_and_the_allowed_ones(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"'truncate'.*\['append', 'write'\]"):
        JSONLPersistenceSink(tmp_path / "x.jsonl", mode="truncate")  # type: ignore[arg-type]
    assert not (tmp_path / "x.jsonl").exists()


async def test_buffered_lines_are_flushed_by_the_timer_without_close(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    sink = JSONLPersistenceSink(path, flush_interval=0.01)
    await sink.emit(events.task_started(_session(), "t1"))
    assert sink.pending == 1 and path.read_bytes() == b""
    await asyncio.sleep(0.05)
    assert sink.pending == 0
    assert len(replay_from_jsonl(path).events) == 1
    await sink.close()


async def test_reaching_the_line_threshold_writes_at_once(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    sink = JSONLPersistenceSink(path, flush_interval=60, flush_lines=3)
    s = _session()
    for _ in range(3):
        await sink.emit(events.task_started(s, "t1"))
    assert sink.pending == 0 and sink.written == 3
    assert len(path.read_text().splitlines()) == 3
    await sink.close()


async def test_close_flushes_releases_the_file_and_later_emit_raises(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    sink = JSONLPersistenceSink(path, flush_interval=60)
    await sink.emit(events.task_started(_session(), "t1"))
    await sink.close()
    await sink.close()
    assert len(replay_from_jsonl(path).events) == 1
    with pytest.raises(SinkError, match="closed"):
        await sink.emit(events.task_started(_session(), "t2"))
    reopened = JSONLPersistenceSink(path)  # the lock was released
    await reopened.close()


async def test_second_writer_on_the_same_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    sink = JSONLPersistenceSink(path)
    with pytest.raises(SinkError, match="locked"):
        JSONLPersistenceSink(path)
    await sink.close()


async def test_torn_last_line_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    evs = await _record(path, 3)
    with path.open("ab") as f:
        f.write(b'{"eventId": "r1:3:x", "runId": "r1", "seq')  # crash mid-write
    result = replay_from_jsonl(path)
    assert result.events == evs
    assert result.skipped == 1
    assert result.errors[0].startswith("line 4: torn last line")


async def test_corrupt_middle_lines_are_skipped_with_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    evs = await _record(path, 4)
    lines = path.read_bytes().split(b"\n")
    lines[1] = b"not json at all"
    lines[2] = b'{"taskStarted": {"taskId": 5, "nope": true}, "sequence": "x"}'
    lines.insert(3, b"\xff\xfe")
    lines.insert(3, b"")  # blank lines are not errors
    path.write_bytes(b"\n".join(lines))
    result = replay_from_jsonl(path)
    assert [e.sequence for e in result.events] == [0, 3]
    assert result.events == [evs[0], evs[3]]
    assert result.skipped == 3
    assert [e.split(":")[0] for e in result.errors] == ["line 2", "line 3", "line 5"]
    assert all("corrupt line" in e for e in result.errors)


def test_missing_file_raises_replay_error_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(ReplayError, match="nope.jsonl") as info:
        replay_from_jsonl(missing)
    assert isinstance(info.value, GoldfiveError)


def test_empty_file_replays_to_nothing(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert replay_from_jsonl(path) == ReplayResult()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full to make writes fail")
async def test_write_failure_is_logged_recorded_raised_from_the_next_call_and_the_batch_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "run.jsonl"
    sink = JSONLPersistenceSink(path, flush_interval=60)
    real = sink.log._file
    sink.log._file = open("/dev/full", "wb", buffering=0)  # every write fails with ENOSPC
    s = _session()
    await sink.emit(events.task_started(s, "t1"))
    with pytest.raises(SinkError, match="writing 1 events"):
        await sink.flush()
    assert sink.errors and "writing 1 events" in sink.errors[0]
    assert any("writing 1 events" in r.getMessage() for r in caplog.records)
    assert sink.pending == 1  # kept for the next write
    sink.log._file.close()
    sink.log._file = real  # the disk has room again
    await sink.emit(events.task_started(s, "t2"))
    await sink.close()
    assert [e.task_started.task_id for e in replay_from_jsonl(path).events] == ["t1", "t2"]


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGXFSZ"), reason="needs RLIMIT_FSIZE")
async def test_a_batch_written_in_part_is_cut_off_and_written_whole_by_the_retry(tmp_path: Path) -> None:
    import resource
    import signal

    path = tmp_path / "run.jsonl"
    sink = JSONLPersistenceSink(path, flush_interval=60)
    s = _session()
    await sink.emit(events.run_started(s, goal_summary="g"))
    await sink.flush()
    before = path.stat().st_size
    for i in range(5):
        await sink.emit(events.task_progress(s, "t", detail=str(i)))
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails (EFBIG)
    resource.setrlimit(resource.RLIMIT_FSIZE, (before + 100, hard))  # room for part of the batch
    try:
        with pytest.raises(SinkError, match="writing 5 events"):
            await sink.flush()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old)
    assert path.stat().st_size == before  # no torn line left
    await sink.close()
    result = replay_from_jsonl(path)
    assert result.skipped == 0 and [e.sequence for e in result.events] == list(range(6))


async def test_appending_after_a_torn_last_line_keeps_the_new_events_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _record(path, 2)
    with path.open("ab") as f:
        f.write(b'{"eventId": "r1:2:x", "runId": "r1", "seq')  # crash mid-write
    later = await _record(path, 2, run_id="r2")
    result = replay_from_jsonl(path)
    assert result.events[2:] == later
    assert result.skipped == 1 and result.errors[0].startswith("line 3: corrupt line")


async def test_an_event_the_file_holds_already_is_not_written_twice(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    evs = await _record(path, 3)
    sink = JSONLPersistenceSink(path)  # appending to it: what it holds is known
    for ev in evs[1:]:
        await sink.emit(ev)
    await sink.close()
    assert sink.duplicates == 2 and sink.written == 0
    assert replay_from_jsonl(path).events == evs


async def test_write_mode_refused_by_a_held_file_leaves_it_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    sink = JSONLPersistenceSink(path)
    await sink.emit(events.task_started(_session(), "t1"))
    await sink.flush()
    with pytest.raises(SinkError, match="locked"):
        JSONLPersistenceSink(path, mode="write")
    await sink.close()
    assert len(replay_from_jsonl(path).events) == 1


async def test_a_durable_sink_writes_a_state_change_before_the_run_goes_on(tmp_path: Path) -> None:
    batched, durable = tmp_path / "batched.jsonl", tmp_path / "durable.jsonl"
    sinks = [JSONLPersistenceSink(batched, flush_interval=60), JSONLPersistenceSink(durable, flush_interval=60, durability="full")]
    for sink in sinks:
        await sink.emit(events.task_started(_session(), "t1"))
        await sink.sync()
    assert batched.read_bytes() == b"" and len(replay_from_jsonl(durable).events) == 1
    for sink in sinks:
        await sink.close()
    with pytest.raises(ValueError, match="durability"):
        JSONLPersistenceSink(tmp_path / "x.jsonl", durability="sometimes")


def test_unopenable_path_raises_sink_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SinkError, match="no-such-dir"):
        JSONLPersistenceSink(tmp_path / "no-such-dir" / "run.jsonl")


async def test_a_deeply_nested_line_is_skipped_and_counted_between_good_events(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    evs = await _record(path, 3)
    lines = path.read_bytes().split(b"\n")
    lines.insert(1, b"[" * 100_000)
    lines.insert(2, b'{"runId": ' * 50_000)
    path.write_bytes(b"\n".join(lines))
    result = replay_from_jsonl(path)
    assert result.events == evs
    assert result.skipped == 2
    assert result.errors == [
        "line 2: corrupt line: nested too deeply to read",
        "line 3: corrupt line: nested too deeply to read",
    ]


async def test_an_appended_file_whose_lines_another_writer_shaped_is_not_given_a_key_twice(tmp_path: Path) -> None:
    """Opening for append reads each run's highest sequence from the lines' keys, whatever
    their order or spacing (a line written by another JSON encoder), so a stored key is
    looked up, not written again."""
    path = tmp_path / "run.jsonl"
    s = _session()
    evs = [events.run_started(s, goal_summary="g")] + [events.task_started(s, f"t{i}") for i in range(6)]
    reordered = json.loads(encode_line(evs[5]))
    reordered["sequence"] = reordered.pop("sequence")  # last, not after the run id
    sorted_keys = json.dumps(json.loads(encode_line(evs[4])), sort_keys=True, indent=None)
    path.write_text(json.dumps(reordered, separators=(",", ":")) + "\n" + sorted_keys + "\n")
    sink = JSONLPersistenceSink(path)
    for ev in (evs[5], evs[6]):  # above the sorted line's 4: looked up only if the 5 was read
        await sink.emit(ev)
    await sink.close()
    assert (sink.written, sink.duplicates) == (1, 1)
    assert sorted(e.sequence for e in replay_from_jsonl(path).events) == [4, 5, 6]
