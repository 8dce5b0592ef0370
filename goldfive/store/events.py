"""StoredEvents: one recorded run as a read-only sequence of Events, read from SQLite on demand.

Opening reads only the run's sequence numbers (8 bytes an event); an event is decoded when it
is asked for, a chunk of ``CHUNK`` at a time, and only the last few chunks are kept. Iterating
streams the whole run a chunk at a time without keeping any. A row that does not decode stays
in its position as an Event with no payload (so positions never shift) and is counted on
``damaged``.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from typing import overload, Sequence

from goldfive.errors import ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.history import CHUNK, RunHistory, connect_read_only

__all__ = ["StoredEvents"]

_CACHED_CHUNKS = 8


class StoredEvents(Sequence[Event]):
    def __init__(self, history: RunHistory) -> None:
        self.history = history
        conn = connect_read_only(history.path)
        try:
            self._sequences = array("q")
            cursor = conn.execute(
                f"SELECT sequence FROM {history.table} WHERE run_id = ? ORDER BY sequence", (history.run_id,)
            )
            while rows := cursor.fetchmany(10_000):
                # a damaged row can hold something other than a number: left out (its events
                # are read by range, so nothing else is lost)
                self._sequences.extend(r[0] for r in rows if isinstance(r[0], int))
        except sqlite3.DatabaseError as exc:
            raise ReplayError(f"cannot read run {history.run_id!r} of {history.path!r}: {exc}") from exc
        finally:
            conn.close()
        self._chunks: OrderedDict[int, list[Event]] = OrderedDict()
        self._query = (
            f"SELECT sequence, payload FROM {history.table}"
            " WHERE run_id = ? AND sequence >= ? AND sequence <= ? ORDER BY sequence"
        )

    @property
    def damaged(self) -> int:
        return self.history.damaged

    def __len__(self) -> int:
        return len(self._sequences)

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if isinstance(index, slice):
            return _Slice(self, range(len(self))[index])
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        c = index // CHUNK
        chunk = self._chunks.get(c)
        if chunk is None:
            chunk = self._read(c * CHUNK, min((c + 1) * CHUNK, len(self)))
            self._chunks[c] = chunk
            if len(self._chunks) > _CACHED_CHUNKS:
                self._chunks.popitem(last=False)
        else:
            self._chunks.move_to_end(c)
        return chunk[index - c * CHUNK]

    def __iter__(self) -> Iterator[Event]:
        for start in range(0, len(self), CHUNK):
            yield from self._read(start, min(start + CHUNK, len(self)))

    def _read(self, start: int, stop: int) -> list[Event]:
        """The events at positions [start, stop), decoded."""
        h = self.history
        conn = connect_read_only(h.path)
        try:
            rows = conn.execute(self._query, (h.run_id, self._sequences[start], self._sequences[stop - 1])).fetchall()
        except sqlite3.DatabaseError as exc:
            raise ReplayError(f"cannot read run {h.run_id!r} of {h.path!r}: {exc}") from exc
        finally:
            conn.close()
        out: list[Event] = []
        for sequence, payload in rows:
            ev = h._decode(sequence, payload)
            out.append(ev if ev is not None else Event(run_id=h.run_id, sequence=sequence))
        return out


class _Slice(Sequence[Event]):
    """A range of a StoredEvents, read in chunks as it is iterated."""

    def __init__(self, events: StoredEvents, positions: range) -> None:
        self._events = events
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if isinstance(index, slice):
            return _Slice(self._events, self._positions[index])
        return self._events[self._positions[index]]

    def __iter__(self) -> Iterator[Event]:
        r = self._positions
        if r.step != 1:
            yield from (self._events[i] for i in r)
            return
        for start in range(r.start, r.stop, CHUNK):
            yield from self._events._read(start, min(start + CHUNK, r.stop))
