"""Reading one run back from a SQLite recording for ``resume``: streamed in sequence order,
stopping at the first row that cannot be read or that breaks the sequence (a torn tail), which
is counted and never guessed."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator

from google.protobuf.message import DecodeError

from goldfive.compat import decode_recorded
from goldfive.errors import GoldfiveError, ReplayError
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.store.sqlite import run_ids_with_prefix, run_rows


class ResumeRefused(GoldfiveError):
    """``resume`` will not continue this run; the message says why, in one line."""


def open_store(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """The recording, read-only, opened by the store (its path made a URI: a ``#`` or ``?``
    in a file name is the name's)."""
    from goldfive.store.history import connect_read_only

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ResumeRefused(f"no recording at {path}")
    try:
        return connect_read_only(path)
    except ReplayError as exc:
        raise ResumeRefused(str(exc)) from None


def resolve_run(conn: sqlite3.Connection, ref: str, path: str) -> str:
    """A run id, or a unique prefix of one, recorded in ``conn``."""
    try:
        ids = run_ids_with_prefix(conn, ref)
    except sqlite3.Error as exc:
        raise ResumeRefused(f"{path} is not a goldfive recording: {exc}") from None
    if ref in ids:
        return ref
    if len(ids) == 1 and len(ref) >= 4:
        return str(ids[0])
    if not ids:
        raise ResumeRefused(f"no run {ref!r} in {path}")
    shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
    raise ResumeRefused(f"{ref!r} names more than one run in {path} ({shown}); give more of the id")


def read_run(conn: sqlite3.Connection, run_id: str) -> tuple[list[pb.Event], int]:
    """The run's events from sequence 0 up to the first unreadable row or sequence gap, and
    how many rows were left out."""
    out: list[pb.Event] = []
    left_out = 0
    for sequence, payload in _rows(conn, run_id):
        if left_out or sequence != len(out):
            left_out += 1
            continue
        try:
            ev = decode_recorded(payload)
        except DecodeError:
            left_out += 1
            continue
        out.append(ev)
    return out, left_out


def _rows(conn: sqlite3.Connection, run_id: str) -> Iterator[tuple[int, bytes]]:
    try:
        yield from run_rows(conn, run_id)
    except sqlite3.DatabaseError as exc:
        raise ResumeRefused(f"the recording cannot be read: {exc}") from None
