"""The rows of a SQLite recording's ``events`` table as its writer makes them: ``row_of`` encodes
an event at emit, and a group commit's rows are sorted and freed in slices that let the GIL go
(goldfive.store.sqlite_log.SqliteLog is their one writer)."""

from __future__ import annotations

import time
from operator import itemgetter

from goldfive.compat import RECORDING_MARK
from goldfive.pb.goldfive.v1.events_pb2 import Event

__all__ = ["Row", "row_of"]

#: One event as the ``events`` table stores it: (run_id, sequence, event_id, kind,
#: emitted_at_ms, payload), the payload the event's recorded bytes (``recorded_bytes``), held
#: as a bytearray (stored as the same BLOB; see ``row_of``).
Row = tuple[str, int, str, str, int, bytes | bytearray]
_row_key = itemgetter(0, 1)  # (run_id, sequence)
#: Rows sorted by one call in the worker thread. A sort is one C call that holds the GIL from
#: start to end: a hub's group commit of 20,000 rows held it ~12 ms, the hub's event loop (and
#: a control waiting in it) with it; 4,000 rows take ~0.6 ms, and the loop's thread can take
#: the GIL between two slices.
_SORT_SLICE = 4000


def sorted_in_slices(rows: list[Row]) -> list[Row]:
    """``rows`` sorted by key slice by slice (each slice in order, the whole nearly so), in a
    new list (``rows`` is the caller's, kept as it is to retry)."""
    if len(rows) <= _SORT_SLICE:
        return sorted(rows, key=_row_key)
    out: list[Row] = []
    for i in range(0, len(rows), _SORT_SLICE):
        out.extend(sorted(rows[i : i + _SORT_SLICE], key=_row_key))
    return out


#: Rows freed at a time by ``free_in_slices`` (about 0.1 ms), the GIL let go between two slices.
_FREE_SLICE = 1000


def free_in_slices(rows: list[Row]) -> None:
    """Empty ``rows`` (the last references to them) from the end, a slice at a time, letting
    the GIL go between two: freeing a group commit's 60,000 rows is ~6 ms of one thread, which
    the event loop's thread would otherwise wait for up to the switch interval (5 ms)."""
    while rows:
        del rows[-_FREE_SLICE:]
        time.sleep(0)  # (releases the GIL: a thread waiting for it takes it now)


# The payload is built as a bytearray because Python's sqlite3 (3.11 at least) binds exact
# int, float, str and bytearray parameters directly, but sends ``bytes`` through its adapter
# lookup first (a tuple built and hashed, two attribute lookups): about 2,000 instructions per
# row more than the bytearray costs to build (callgrind, bench/bench_core_floor.py's SQLite row).
_joined = bytearray().join


def row_of(event: Event) -> Row:
    """``event``'s row, encoded now (the SQLite and PostgreSQL sinks queue it at emit: the
    record is fixed then)."""
    ts = event.emitted_at
    return (
        event.run_id,
        event.sequence,
        event.event_id,
        event.WhichOneof("payload") or "",
        ts.seconds * 1000 + ts.nanos // 1_000_000,
        _joined((event.SerializeToString(), RECORDING_MARK)),  # recorded_bytes(event), without the call
    )
