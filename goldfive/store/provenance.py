"""Provenance: who wrote a run's events, recorded by the log that stores them.

A log records, per run, ranges ``(from_sequence, writer)``: the run's events from
``from_sequence`` on (up to the next range) were written by ``writer``. The writer is never
read from an event: it is the log's own ``writer`` (the process, or a hub for the runs it
hosts), or the name its caller gave with ``write_as(run_id, writer, from_sequence)`` after
checking it (a hub names the credential a runner connected with, from the first sequence
that runner sends). Each log stores the ranges of an append in the same commit as its events
(SQLite: ``event_writers``; PostgreSQL: ``goldfive_writers``; JSONL: ``<file>.writers``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Writers"]

#: A run's latest stored range (from_sequence, writer), or None when it has none.
LastRange = Callable[[str], "tuple[int, str] | None"]
#: Whether the run has events stored below a sequence (recorded before writers were).
HasBefore = Callable[[str, int], bool]


class Writers:
    """The writers a log's caller named per run, and the ranges an append adds."""

    def __init__(self, default: str = "") -> None:
        self.default = default
        self._assigned: dict[str, tuple[list[int], list[str]]] = {}  # run -> (from sequences, writers)
        self._last: dict[str, str] = {}  # run -> the writer of its latest stored range (committed)

    def assign(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """The run's events from ``from_sequence`` on are ``writer``'s (what an earlier
        assignment said of them is replaced)."""
        froms, names = self._assigned.setdefault(run_id, ([], []))
        i = bisect_right(froms, from_sequence - 1)
        del froms[i:], names[i:]
        froms.append(from_sequence)
        names.append(writer)

    def writer_of(self, run_id: str, sequence: int) -> str:
        got = self._assigned.get(run_id)
        if got is None:
            return self.default
        froms, names = got
        i = bisect_right(froms, sequence) - 1
        return names[i] if i >= 0 else self.default

    def ranges(
        self, keys: Sequence[Sequence[Any]], last_range: LastRange, has_before: HasBefore
    ) -> tuple[list[tuple[str, int, str]], dict[str, str]]:
        """The ranges to store with an append of ``keys`` (each starts with the run id and
        the sequence of an event it stores: a row): where a run's writer changes from its latest stored range. A run's first
        range starts at 0 unless events were stored below it before (by an unknown writer).
        Also returns each run's latest writer once they are stored: pass it to ``stored``
        after the commit."""
        runs = {key[0] for key in keys}
        if all(self._settled(run_id) for run_id in runs):
            return [], {}  # the common case: every run's writer is its latest stored one
        lows: dict[str, int] = {}
        highs: dict[str, int] = {}
        for key in keys:
            run_id, seq = key[0], key[1]
            low = lows.get(run_id)
            if low is None:
                lows[run_id] = highs[run_id] = seq
            elif seq < low:
                lows[run_id] = seq
            elif seq > highs[run_id]:
                highs[run_id] = seq
        segments: dict[str, list[tuple[int, str]]] = {}  # run -> [(first sequence, writer)] in order
        for run_id, low in lows.items():
            got = self._assigned.get(run_id)
            if got is None:
                segments[run_id] = [(low, self.default)]
                continue
            froms, names = got
            i, j = bisect_right(froms, low) - 1, bisect_right(froms, highs[run_id]) - 1
            segs = [(low, names[i] if i >= 0 else self.default)]
            # a writer that starts inside the append's span: from its own first sequence
            segs += [(froms[k], names[k]) for k in range(i + 1, j + 1)]
            segments[run_id] = segs
        out: list[tuple[str, int, str]] = []
        lasts: dict[str, str] = {}
        for run_id, order in segments.items():
            if len(order) == 1 and self._last.get(run_id) == order[0][1]:
                continue  # the common case: the run's writer as stored, no query
            last = last_range(run_id)
            for first, writer in order:
                if last is not None and last[1] == writer:
                    continue
                if last is None:
                    start = first if has_before(run_id, first) else 0
                else:
                    start = max(first, last[0] + 1)
                out.append((run_id, start, writer))
                last = (start, writer)
            if last is not None:
                lasts[run_id] = last[1]
        return out, lasts

    def _settled(self, run_id: str) -> bool:
        """The run's latest writer (as named last) is its latest stored range: an append of
        its new events adds no range."""
        got = self._assigned.get(run_id)
        return self._last.get(run_id) == (got[1][-1] if got is not None else self.default)

    def needs_query(self, run_id: str) -> bool:
        """Whether an append of ``run_id`` may have to read the stored ranges (its writer is
        not known to be the latest stored one)."""
        got = self._assigned.get(run_id)
        return got is not None and len(got[1]) > 1 or self._last.get(run_id) != self.writer_of(run_id, 1 << 62)

    def forget(self, run_id: str) -> None:
        """Drop what is known of ``run_id`` (a run that stored no event, forgotten)."""
        self._assigned.pop(run_id, None)
        self._last.pop(run_id, None)

    def stored(self, lasts: dict[str, str]) -> None:
        """An append's ranges were committed: ``lasts`` (from ``ranges``) is what is stored."""
        self._last.update(lasts)
