"""Open a recorded run, JSONL or SQLite, read-only: the events plus what could not be read.

The format is detected from the file's first bytes (SQLite's magic header), not its name, so
a renamed file still opens. A SQLite file with several runs and no run id opens the latest.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goldfive.errors import ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event

__all__ = ["Recording", "open_recording"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


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
    """Open a recording: a JSONL file is read whole; a SQLite one is read on demand.
    Missing file, unknown run id, empty SQLite -> ReplayError."""
    from goldfive.sinks import list_runs, replay_from_jsonl
    from goldfive.store.events import StoredEvents
    from goldfive.store.history import RunHistory

    name = os.fspath(path)
    p = Path(path)
    if not p.exists():
        raise ReplayError(f"no recording at {name!r}")
    if not p.is_file():
        raise ReplayError(f"{name!r} is not a file")
    if detect_format(p) == "sqlite":
        runs = list_runs(p)
        if not runs:
            raise ReplayError(f"{name!r} holds no recorded runs")
        note = ""
        if run_id is None:
            chosen = max(runs, key=lambda r: (_ms(r.last_emitted_at_ms), _ms(r.first_emitted_at_ms)))
            if len(runs) > 1:
                note = f"{len(runs)} runs in {p.name}; showing the latest, {chosen.run_id} (--run-id picks another)"
        else:
            matches = [r for r in runs if r.run_id == run_id]
            if not matches:
                known = ", ".join(r.run_id for r in runs[-5:])
                raise ReplayError(f"no run {run_id!r} in {name!r}; recorded runs include {known}")
            chosen = matches[0]
        return Recording(name, "sqlite", chosen.run_id, StoredEvents(RunHistory(p, chosen.run_id)), note=note)
    result = replay_from_jsonl(p)
    events = result.events
    found = run_id or (events[0].run_id if events else "")
    note = ""
    if run_id is not None:
        events = [e for e in events if e.run_id == run_id]
        if not events and result.events:
            raise ReplayError(f"no run {run_id!r} in {name!r}")
    else:
        ids = {e.run_id for e in events}
        if len(ids) > 1:
            # A JSONL file opened in append mode may hold several runs; show the last one.
            found = events[-1].run_id
            events = [e for e in events if e.run_id == found]
            note = f"{len(ids)} runs in {p.name}; showing the last, {found} (--run-id picks another)"
    return Recording(name, "jsonl", found, events, result.skipped, result.errors, note)


def _ms(value: object) -> int:
    """A time column as a number; a damaged row can hold text there (SQLite allows it)."""
    return value if isinstance(value, int) else -1
