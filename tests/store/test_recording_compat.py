"""Recordings written before the payloads took goldfive v1's field numbers (schema 1, the
fixture in tests/fixtures/recording_schema1) read back as they were written, through every
reader; new recordings are marked and read back exactly as emitted."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from goldfive import compat, events
from goldfive.durable.store import open_log, read_run
from goldfive.pb.goldfive.v1 import types_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.recording import open_recording, recorded_run_choices
from goldfive.sinks._json import message_to_dict
from goldfive.sinks.jsonl import JSONLPersistenceSink, replay_from_jsonl
from goldfive.sinks.sqlite import SQLitePersistenceSink, list_runs, replay_from_sqlite
from goldfive.store.events import StoredEvents
from goldfive.store.history import RunHistory
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, TaskStatus

FIXTURE = Path(__file__).parents[1] / "fixtures" / "recording_schema1"
DEMO, SYNTHETIC = "fixture-demo-run", "fixture-synthetic-run"

#: What the code that wrote the fixture read from it: its JSONL lines, as plain JSON.
EXPECTED: list[dict[str, Any]] = [json.loads(line) for line in (FIXTURE / "recording.jsonl").read_text().splitlines()]


@pytest.fixture
def old_sqlite(tmp_path: Path) -> Path:
    path = tmp_path / "old.sqlite"
    shutil.copyfile(FIXTURE / "recording.sqlite", path)
    return path


@pytest.fixture
def old_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "old.jsonl"
    shutil.copyfile(FIXTURE / "recording.jsonl", path)
    return path


def _differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Where ``new`` does not say what ``old`` said (new may say more: v1's repeated fields)."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{path}: {new!r} is not an object"]
        out: list[str] = []
        for key, value in old.items():
            if path.endswith("/taskProgress") and key == "fraction" and value < 0:
                if "fraction" in new:  # schema 1 wrote -1 for "none reported"; now: absent
                    out.append(f"{path}/fraction: {new['fraction']!r}, expected none")
            elif key not in new:
                out.append(f"{path}/{key}: missing")
            else:
                out += _differences(value, new[key], f"{path}/{key}")
        return out
    if isinstance(old, float) or isinstance(new, float):  # fraction is a float32 now
        return [] if new == pytest.approx(old, rel=1e-6) else [f"{path}: {new!r} != {old!r}"]
    return [] if old == new else [f"{path}: {new!r} != {old!r}"]


def _assert_reads_back_as_written(got: list[Event]) -> None:
    assert [e.event_id for e in got] == [e["eventId"] for e in EXPECTED]
    problems = [p for old, ev in zip(EXPECTED, got) for p in _differences(old, message_to_dict(ev), old["eventId"])]
    assert problems == []
    assert not any(e.recording_schema for e in got)


def _sqlite_events(path: Path) -> list[Event]:
    return [e for run in list_runs(path) for e in replay_from_sqlite(path, run.run_id)]


def test_the_fixture_is_schema_1_bytes_a_plain_parse_misreads() -> None:
    """The premise: today's schema, parsing the old bytes without translation, gets them
    wrong (the goal summary lands in run_id, a drift's kind in its id...)."""
    conn = sqlite3.connect(FIXTURE / "recording.sqlite")
    row = conn.execute("SELECT payload FROM events WHERE run_id = ? AND sequence = 0", (SYNTHETIC,)).fetchone()
    conn.close()
    naive = Event.FromString(row[0])
    assert naive.run_started.run_id == "the goal summary" and naive.run_started.goal_summary == "the user's raw input"
    assert compat.decode_recorded(row[0]).run_started.goal_summary == "the goal summary"


def test_a_schema_1_sqlite_recording_reads_back_as_it_was_written(old_sqlite: Path) -> None:
    _assert_reads_back_as_written(_sqlite_events(old_sqlite))


def test_a_schema_1_jsonl_recording_reads_back_as_it_was_written(old_jsonl: Path) -> None:
    result = replay_from_jsonl(old_jsonl)
    assert result.skipped == 0
    _assert_reads_back_as_written(result.events)


@pytest.mark.parametrize("fmt", ["sqlite", "jsonl"])
def test_schema_1_values_that_moved_read_right(fmt: str, old_sqlite: Path, old_jsonl: Path) -> None:
    got = _sqlite_events(old_sqlite) if fmt == "sqlite" else replay_from_jsonl(old_jsonl).events
    by_run: dict[str, list[Event]] = {}
    for ev in got:
        by_run.setdefault(ev.run_id, []).append(ev)

    def of(run: str, kind: str) -> list[Any]:
        return [getattr(e, kind) for e in by_run[run] if e.WhichOneof("payload") == kind]

    assert of(DEMO, "run_started")[0].goal_summary == "build me a slide deck about Python"
    [started] = of(SYNTHETIC, "run_started")
    assert (started.goal_summary, started.user_input, started.launch_json) == ("the goal summary", "the user's raw input", '{"agent": "m:f"}')
    assert started.run_id == SYNTHETIC  # v1's copy of the envelope, filled on the way in

    [steer] = [d for d in of(DEMO, "drift_detected") if d.kind == types_pb2.DRIFT_KIND_USER_STEER]
    assert steer.severity == types_pb2.DRIFT_SEVERITY_WARNING and steer.annotation_id == "ann-1" and steer.id
    drifts = {d.id: d for d in of(SYNTHETIC, "drift_detected")}
    custom = next(d for d in drifts.values() if d.kind == types_pb2.DRIFT_KIND_CUSTOM)
    assert (custom.severity, custom.detail, custom.current_task_id, custom.annotation_id) == (
        types_pb2.DRIFT_SEVERITY_CRITICAL, "custom drift detail", "b", "ann-9")
    assert {d.kind for d in drifts.values()} == {
        types_pb2.DRIFT_KIND_CUSTOM, types_pb2.DRIFT_KIND_USER_PAUSE, types_pb2.DRIFT_KIND_LOOPING_TOOL_CALL}

    progress = of(SYNTHETIC, "task_progress")
    assert [(p.detail, p.HasField("fraction")) for p in progress] == [
        ("a third", True), ("half", True), ("no fraction reported", False), ("nothing yet", True)]
    assert [round(p.fraction, 6) for p in progress] == [0.3, 0.5, 0.0, 0.0]
    assert all(p.fraction == 0.5 for p in of(DEMO, "task_progress"))

    [demo_revision] = of(DEMO, "plan_revised")
    assert demo_revision.drift_id == steer.id and demo_revision.plan.revision_index == 1
    assert demo_revision.drift_kind == types_pb2.DRIFT_KIND_USER_STEER  # v1's copies, filled
    [revision] = of(SYNTHETIC, "plan_revised")
    assert revision.drift_id == "drift-id-1" and revision.plan.id == "plan-1"
    assert (list(revision.diff.added_task_ids), list(revision.diff.removed_task_ids)) == (["c"], ["b"])
    assert (revision.drift_kind, revision.severity, revision.reason, revision.revision_index) == (
        types_pb2.DRIFT_KIND_CUSTOM, types_pb2.DRIFT_SEVERITY_CRITICAL, "custom drift detail", 1)

    tool, task = of(SYNTHETIC, "approval_requested")
    assert (tool.target_id, tool.kind, tool.prompt, tool.task_id, tool.tool_name, tool.timeout_ms) == (
        "call-1", "tool", "charge $500?", "a", "charge", 60000)
    assert json.loads(tool.args_json) == {"amount": 500} and tool.metadata["k"] == "v"
    assert (tool.on_timeout, tool.retry_of) == ("reject", "call-0")
    assert (task.target_id, task.kind, task.tool_name) == ("a", "task", "")
    [publish] = of(DEMO, "approval_requested")
    assert publish.tool_name == "publish_deck" and json.loads(publish.args_json)["slides"] > 0
    assert [g.target_id for g in of(DEMO, "approval_granted")] == [publish.target_id]

    assert [(s.task_id, s.assignee_agent_id) for s in of(SYNTHETIC, "task_started")] == [("a", "researcher")]
    assert [(c.lane, c.input) for c in of(SYNTHETIC, "conversation_started")] == [("a", "first turn input")]
    assert [(c.lane, c.reason) for c in of(SYNTHETIC, "conversation_ended")] == [("a", "task done")]
    assert [(t.task_id, t.from_status, t.to_status, t.reason, t.from_status_name, t.to_status_name)
            for t in of(SYNTHETIC, "task_transitioned")] == [
        ("c", types_pb2.TASK_STATUS_PENDING, types_pb2.TASK_STATUS_NOT_NEEDED, "not needed after all", "PENDING", "NOT_NEEDED"),
        ("a", types_pb2.TASK_STATUS_COMPLETED, types_pb2.TASK_STATUS_PENDING, "rewind", "COMPLETED", "PENDING")]
    assert [e.WhichOneof("payload") for e in by_run[DEMO]][-1] == "run_completed"
    assert of(SYNTHETIC, "run_aborted")[0].reason == "stopped for the fixture"  # fmt: skip


def test_every_sqlite_reader_translates_schema_1(old_sqlite: Path) -> None:
    want = {run: replay_from_sqlite(old_sqlite, run) for run in (DEMO, SYNTHETIC)}
    for run, evs in want.items():
        assert list(RunHistory(old_sqlite, run).events(chunk=5)) == evs
        assert [e for b in RunHistory(old_sqlite, run).batches(chunk=5) for e in b.events] == evs
        stored = StoredEvents(RunHistory(old_sqlite, run))
        assert list(stored) == evs and stored[3] == evs[3] and stored.damaged == 0
        assert list(open_recording(old_sqlite, run).events) == evs
        assert read_run(open_log(old_sqlite), run) == (evs, 0)
    choices = {c.run_id: c for c in recorded_run_choices(old_sqlite)}
    assert choices[DEMO].goal == "build me a slide deck about Python" and choices[DEMO].state == "COMPLETED"
    assert choices[SYNTHETIC].goal == "the goal summary" and choices[SYNTHETIC].state == "ABORTED"


def test_the_jsonl_recording_opens_the_same_as_the_sqlite_one(old_sqlite: Path, old_jsonl: Path) -> None:
    for run in (DEMO, SYNTHETIC):
        assert list(open_recording(old_jsonl, run).events) == list(open_recording(old_sqlite, run).events)


def _new_events() -> list[Event]:
    s = Session(run_id="new-run", session_id="s", clock=lambda: 1_800_000_000_000)
    return [
        events.run_started(s, goal_summary="new goal", user_input="new input"),
        events.task_progress(s, "a", detail="none"),
        events.task_progress(s, "a", detail="some", fraction=0.25),
        events.drift_detected(s, DriftEvent(DriftKind.CUSTOM, DriftSeverity.CRITICAL, "x", "a", id="d9")),
        events.task_transitioned(s, "a", TaskStatus.PENDING, TaskStatus.NOT_NEEDED, "why"),
        events.run_completed(s, "ok"),
    ]


async def test_new_recordings_are_marked_and_read_back_exactly_as_emitted(tmp_path: Path) -> None:
    emitted = _new_events()
    db, lines = tmp_path / "new.sqlite", tmp_path / "new.jsonl"
    sinks = [SQLitePersistenceSink(db), JSONLPersistenceSink(lines)]
    for ev in emitted:
        for sink in sinks:
            await sink.emit(ev)
    for sink in sinks:
        await sink.close()
    conn = sqlite3.connect(db)
    payloads = [p for (p,) in conn.execute("SELECT payload FROM events ORDER BY sequence")]
    conn.close()
    assert all(Event.FromString(p).recording_schema == compat.RECORDING_SCHEMA for p in payloads)
    assert all(json.loads(line)["recordingSchema"] == compat.RECORDING_SCHEMA for line in lines.read_text().splitlines())
    assert replay_from_sqlite(db, "new-run") == emitted
    assert replay_from_jsonl(lines).events == emitted
    assert [e for b in RunHistory(db, "new-run").batches() for e in b.events] == emitted


async def test_new_events_appended_to_an_old_recording_read_back_beside_the_old_ones(old_sqlite: Path, old_jsonl: Path) -> None:
    emitted = _new_events()
    sinks = [SQLitePersistenceSink(old_sqlite), JSONLPersistenceSink(old_jsonl, mode="append")]
    for ev in emitted:
        for sink in sinks:
            await sink.emit(ev)
    for sink in sinks:
        await sink.close()
    assert replay_from_sqlite(old_sqlite, "new-run") == emitted
    result = replay_from_jsonl(old_jsonl)
    assert result.events[len(EXPECTED):] == emitted
    _assert_reads_back_as_written(result.events[: len(EXPECTED)])
    _assert_reads_back_as_written([e for run in (DEMO, SYNTHETIC) for e in replay_from_sqlite(old_sqlite, run)])


async def test_an_old_recording_gets_writers_and_owned_locks_when_written_and_its_old_runs_read_as_before(old_sqlite: Path) -> None:
    """A file from before provenance and lock owners: its runs have no recorded writer, a run
    continued in it has one from the first event written now, and a lock can be taken."""
    from goldfive.store.log import SqliteLog

    old_run = replay_from_sqlite(old_sqlite, SYNTHETIC)
    more = []
    for i in range(3):
        ev = events.task_progress(Session(run_id=SYNTHETIC), "t1", detail=f"later {i}")
        ev.sequence = old_run[-1].sequence + 1 + i
        more.append(ev)
    log = SqliteLog(old_sqlite, writer="this-process")
    try:
        assert await log.writers(SYNTHETIC) == []  # nobody recorded: unknown, not guessed
        assert await log.lock(SYNTHETIC, "this-process") is None  # run_locks gains its owner column
        assert await log.append(more) == 3
        assert await log.writers(SYNTHETIC) == [(more[0].sequence, "this-process")]
        assert await log.writers(DEMO) == []
    finally:
        await log.close()
    _assert_reads_back_as_written([e for run in (DEMO, SYNTHETIC) for e in replay_from_sqlite(old_sqlite, run)][: len(EXPECTED)])


def test_bytes_that_are_no_event_in_either_numbering_are_refused() -> None:
    from google.protobuf.message import DecodeError

    for junk in (b"\xff\xff\xff", b"\x52\x05ab"):  # a bad tag; a length past the end
        with pytest.raises(DecodeError):
            compat.decode_recorded(junk)


async def test_postgres_reads_schema_1_rows_and_marks_new_ones(pg_dsn: str) -> None:
    import psycopg

    from goldfive.store.postgres import PostgresStore

    store = await PostgresStore.open(pg_dsn)
    try:
        conn = sqlite3.connect(FIXTURE / "recording.sqlite")
        rows = conn.execute("SELECT run_id, sequence, event_id, kind, emitted_at_ms, payload FROM events").fetchall()
        conn.close()
        with psycopg.connect(pg_dsn, autocommit=True) as pg:  # as a hub stored them before the change
            with pg.cursor() as cur:
                cur.executemany("INSERT INTO goldfive_events VALUES (%s, %s, %s, %s, %s, %s)", rows)
        got = [ev for run in (DEMO, SYNTHETIC) async for ev in store.events(run, chunk=7)]
        _assert_reads_back_as_written(got)
        emitted = _new_events()
        assert await store.append(emitted) == len(emitted)
        assert [ev async for ev in store.events("new-run")] == emitted
        with psycopg.connect(pg_dsn) as pg:
            stored = [bytes(p) for (p,) in pg.execute("SELECT payload FROM goldfive_events WHERE run_id = 'new-run'")]
        assert all(Event.FromString(p).recording_schema == compat.RECORDING_SCHEMA for p in stored)
    finally:
        await store.close()


def test_resume_lists_the_interrupted_runs_of_an_old_recording_with_their_goals(old_sqlite: Path) -> None:
    """``goldfive resume`` with several interrupted runs names each with its goal, read from its
    RunStarted through the recording's log (main parsed the row itself, without translating
    schema 1: an old run's goal read as another field)."""
    from click.testing import CliRunner

    from goldfive.cli import main

    conn = sqlite3.connect(old_sqlite)
    with conn:
        conn.execute("DELETE FROM events WHERE kind IN ('run_completed', 'run_aborted')")
    conn.close()
    result = CliRunner().invoke(main, ["resume", "--db", str(old_sqlite), "--headless"])
    assert result.exit_code == 2 and "2 interrupted runs" in result.output, result.output
    assert '"build me a slide deck about Python"' in result.output and '"the goal summary"' in result.output
