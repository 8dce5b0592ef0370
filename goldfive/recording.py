"""Open a recorded run, JSONL or SQLite, read-only: the events plus what could not be read.

The format is detected from the file's first bytes (SQLite's magic header), not its name, so
a renamed file still opens. A SQLite file with several runs and no run id opens the latest.
A SQLite recording is read through its EventLog (goldfive.store.SqliteLog: its runs listed,
a run read from a sequence), a JSONL one through goldfive.store's JSONL reader; nothing here
decodes a stored row.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goldfive.errors import GoldfiveError, ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.naming import match_run
from goldfive.store.sqlite import RunInfo
from goldfive.store.sqlite_log import SqliteLog

__all__ = ["Recording", "RunChoice", "match_run", "open_recording", "recorded_run_choices"]

_SQLITE_MAGIC = b"SQLite format 3\x00"
#: A JSONL recording larger than this is read on demand (goldfive.store.jsonl), not whole.
STREAM_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Recording:
    path: str
    format: str  # "jsonl" or "sqlite"
    run_id: str
    #: A SQLite recording's events are read from the file on demand (``StoredEvents``).
    events: Sequence[Event] = field(default_factory=list)
    #: Lines that could not be read (JSONL only), each described in ``errors``; a SQLite
    #: recording counts its undecodable rows on ``events.damaged`` as they are read.
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    #: A sentence for the person, e.g. which of several runs was chosen.
    note: str = ""


def detect_format(path: str | os.PathLike[str]) -> str:
    try:
        with open(path, "rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise ReplayError(f"cannot read recording {os.fspath(path)!r}: {exc.strerror or exc}") from None
    return "sqlite" if head == _SQLITE_MAGIC else "jsonl"


def open_recording(path: str | os.PathLike[str], run_id: str | None = None) -> Recording:
    """Open a recording: a SQLite one, or a JSONL one over ``STREAM_BYTES``, is read on
    demand; a shorter JSONL file is read whole.
    Missing file, unknown run id, empty SQLite -> ReplayError."""
    from goldfive.sinks import replay_from_jsonl
    from goldfive.store.events import StoredEvents

    name = os.fspath(path)
    p = Path(path)
    if not p.exists():
        raise ReplayError(f"no recording at {name!r}")
    if not p.is_file():
        raise ReplayError(f"{name!r} is not a file")
    if detect_format(p) == "sqlite":
        log = SqliteLog(p)
        runs = log.list_runs()
        if not runs:
            raise ReplayError(f"{name!r} holds no recorded runs")
        note = ""
        if run_id is None:
            chosen = max(runs, key=lambda r: (_ms(r.last_emitted_at_ms), _ms(r.first_emitted_at_ms)))
            if len(runs) > 1:
                note = f"{len(runs)} runs in {p.name}; showing the latest, {chosen.run_id} (--run-id picks another)"
        else:
            found_id = match_run([r.run_id for r in runs], run_id, name)
            chosen = next(r for r in runs if r.run_id == found_id)
        return Recording(name, "sqlite", chosen.run_id, StoredEvents(log.history(chosen.run_id)), note=note)
    if p.stat().st_size > STREAM_BYTES:
        return _open_jsonl_streamed(name, run_id)
    result = replay_from_jsonl(p)
    events = result.events
    found = run_id or (events[0].run_id if events else "")
    note = ""
    if run_id is not None:
        if result.events:
            found = match_run(list(dict.fromkeys(e.run_id for e in result.events)), run_id, name)
        events = [e for e in events if e.run_id == found]
    else:
        ids = {e.run_id for e in events}
        if len(ids) > 1:
            # A JSONL file opened in append mode may hold several runs; show the last one.
            found = events[-1].run_id
            events = [e for e in events if e.run_id == found]
            note = f"{len(ids)} runs in {p.name}; showing the last, {found} (--run-id picks another)"
    return Recording(name, "jsonl", found, events, result.skipped, result.errors, note)


def _open_jsonl_streamed(name: str, run_id: str | None) -> Recording:
    """A long JSONL recording: scanned once (lines counted, nothing decoded), then read a
    block at a time as the replay asks (goldfive.store.jsonl)."""
    from goldfive.store.jsonl import JsonlEvents, scan_jsonl

    scan = scan_jsonl(name, run_id)
    note = ""
    if run_id is None and len(scan.run_ids) > 1:
        note = f"{len(scan.run_ids)} runs in {Path(name).name}; showing the last, {scan.run_id} (--run-id picks another)"
    return Recording(name, "jsonl", scan.run_id, JsonlEvents(scan), scan.skipped, scan.errors, note)


def _ms(value: object) -> int:
    """A time column as a number; a damaged row can hold text there (SQLite allows it)."""
    return value if isinstance(value, int) else -1


@dataclass(frozen=True)
class RunChoice:
    """One run of a SQLite recording, as the replay picker lists it."""

    run_id: str
    #: COMPLETED, ABORTED, RUNNING (a live process is writing it now), or INTERRUPTED (the
    #: recording stops before the run ended and nobody writes it).
    state: str
    goal: str
    started_ms: int
    events: int


def recorded_run_choices(path: str | os.PathLike[str]) -> list[RunChoice]:
    """Every run of a SQLite recording with its state and goal, newest first; reads two events
    per run (its first and its last), never a whole history."""
    log = SqliteLog(path)
    with log.reading():  # one connection for every run's two events
        choices = [_choice(log, r) for r in log.list_runs()]
    return sorted(choices, key=lambda c: c.started_ms, reverse=True)


def _choice(log: SqliteLog, r: RunInfo) -> RunChoice:
    """How the picker lists run ``r``: from its first event (the goal) and its last (the state)."""
    first, last = _event_at(log, r.run_id, 0), _event_at(log, r.run_id, r.last_sequence)
    goal = first.run_started.goal_summary if first is not None and first.HasField("run_started") else ""
    kind = last.WhichOneof("payload") if last is not None else None
    state = {"run_completed": "COMPLETED", "run_aborted": "ABORTED"}.get(kind or "", "INTERRUPTED")
    if state == "INTERRUPTED" and _written_now(log, r.run_id):
        state = "RUNNING"
    return RunChoice(r.run_id, state, goal, _ms(r.first_emitted_at_ms), r.event_count)


def _written_now(log: SqliteLog, run_id: str) -> bool:
    """Whether a live process holds the run's lock (it is running, not interrupted); a lock
    table that cannot be read counts as nobody."""
    try:
        held = log.lock_holder(run_id)
    except GoldfiveError:
        return False
    return held is not None and held.alive(log.path)


def _event_at(log: SqliteLog, run_id: str, sequence: int) -> Event | None:
    """One stored event, or None when it is missing or damaged (the picker shows less)."""
    reading = log.history(run_id).events(sequence - 1, chunk=1)
    try:
        ev = next(reading, None)
    finally:
        reading.close()
    return ev if ev is not None and ev.sequence == sequence else None
