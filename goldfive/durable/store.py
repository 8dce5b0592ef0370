"""Reading one run back from a SQLite recording for ``resume``, through the recording's
EventLog (goldfive.store.SqliteLog): the run named by an id or a unique prefix, its events in
sequence order up to the first row that cannot be read or that breaks the sequence (a torn
tail), the rest counted and never guessed."""

from __future__ import annotations

import os

from goldfive.errors import ReplayError, ResumeRefused
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.store.sqlite_log import SqliteLog

__all__ = ["ResumeRefused", "open_log", "read_run", "resolve_run"]


def open_log(path: str | os.PathLike[str]) -> SqliteLog:
    """The recording at ``path``, read through its log (which opens the file read-only for
    each read, by its own name: a ``#`` or ``?`` in it is the name's). ResumeRefused when
    there is no such file."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ResumeRefused(f"no recording at {path}")
    return SqliteLog(path)


def resolve_run(log: SqliteLog, ref: str) -> str:
    """The run ``ref`` names in ``log``: its id, or a unique prefix of 4+ characters (the rule
    every EventLog's ``resolve`` follows). ResumeRefused says why not."""
    try:
        return log.resolve_now(ref)
    except ReplayError as exc:
        raise ResumeRefused(str(exc)) from None


def read_run(log: SqliteLog, run_id: str) -> tuple[list[pb.Event], int]:
    """The run's events from sequence 0 up to the first unreadable row or sequence gap, and
    how many rows were left out (those after it, and the unreadable ones). ResumeRefused when
    the file refuses a read (a damaged page): what follows it is unknown."""
    history = log.history(run_id)
    out: list[pb.Event] = []
    after_gap = 0
    for ev in history.events():
        if after_gap or ev.sequence != len(out):
            after_gap += 1
            continue
        out.append(ev)
    if history.history_error:
        raise ResumeRefused(f"the recording cannot be read: {history.history_error}")
    # An unreadable row leaves its sequence out of what was read: it is at or after the gap.
    return out, after_gap + history.damaged
