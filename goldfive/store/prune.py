"""Old runs of a SQLite recording, and removing them (``goldfive runs prune``).

A run is old when its last event is older than the cut-off. A run whose lock a live process
holds (it is being written now) is never removed, however old its last event.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass

from goldfive.errors import GoldfiveError

__all__ = ["OldRun", "old_runs", "parse_age", "remove_runs"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> int:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s`` as milliseconds; GoldfiveError in words."""
    text = text.strip().lower()
    number, unit = text[:-1], text[-1:]
    if unit not in _UNITS or not number.isdigit() or int(number) <= 0:
        raise GoldfiveError(f"{text!r} is not an age: a whole number and a unit, e.g. 30d, 12h, 90m, 2w")
    return int(number) * _UNITS[unit] * 1000


@dataclass(frozen=True)
class OldRun:
    run_id: str
    #: COMPLETED, ABORTED or INTERRUPTED (its recording stops before it ended).
    state: str
    goal: str
    last_ms: int
    events: int


def old_runs(path: str | os.PathLike[str], cutoff_ms: int) -> list[OldRun]:
    """The runs of ``path`` whose last event is older than ``cutoff_ms``, oldest first; runs
    a live process is writing are left out. ReplayError when the file cannot be read."""
    from goldfive.store import locks as lock
    from goldfive.recording import recorded_run_choices
    from goldfive.sinks import list_runs

    last = {r.run_id: r.last_emitted_at_ms for r in list_runs(path) if r.last_emitted_at_ms < cutoff_ms}
    if not last:
        return []
    conn = sqlite3.connect(f"file:{os.fspath(path)}?mode=ro", uri=True)
    try:
        has_locks = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_locks'").fetchone()
        holders = [lock.holder(conn, run_id) for run_id in last] if has_locks else []
        live = {h.run_id for h in holders if h is not None and h.alive(os.fspath(path))}
    finally:
        conn.close()
    out = [
        OldRun(c.run_id, c.state, c.goal, last[c.run_id], c.events)
        for c in recorded_run_choices(path)
        if c.run_id in last and c.run_id not in live
    ]
    return sorted(out, key=lambda r: (r.last_ms, r.run_id))


def remove_runs(path: str | os.PathLike[str], run_ids: list[str]) -> int:
    """Delete the runs' events (and their locks and writers) from ``path`` in one transaction; the events removed."""
    conn = sqlite3.connect(os.fspath(path), isolation_level=None, timeout=10.0)
    try:
        conn.execute("BEGIN IMMEDIATE")
        removed = 0
        for run_id in run_ids:
            removed += conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,)).rowcount
            for table in ("run_locks", "event_writers"):
                if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone():
                    conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        conn.execute("COMMIT")
        return removed
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise GoldfiveError(f"cannot remove runs from {os.fspath(path)}: {exc}") from None
    finally:
        conn.close()
