"""InMemorySink: keeps every event and feeds live subscribers without ever blocking emit.

Each subscriber owns a bounded buffer that ``emit`` appends to synchronously. A subscriber
that does not keep up loses events (only it, never the sink or other subscribers) and is told
exactly which sequence range it lost by a :class:`Missed` item at the point of the gap; it can
re-read them with :meth:`InMemorySink.events_after`.

Not thread-safe: emit, subscribe and iteration run on one event loop.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from types import TracebackType
from typing import AsyncIterator, Sequence

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event

__all__ = ["InMemorySink", "Missed", "Subscription"]


@dataclass(frozen=True, slots=True)
class Missed:
    """Events ``first_sequence..last_sequence`` (``count`` of them) were dropped for this
    subscriber because its buffer was full."""

    count: int
    first_sequence: int
    last_sequence: int


def _sequence(event: Event) -> int:
    return event.sequence


class Subscription:
    """Async iterator over a sink's events: history first, then live events.

    Yields :class:`Event` and, after an overflow, one :class:`Missed` at the position of the
    gap (after the events that were buffered before it). Ends once the sink is closed and
    everything buffered has been yielded, or at once after :meth:`close`. Cancelling a
    pending ``__anext__`` leaves the subscription usable.
    """

    __slots__ = (
        "_sink",
        "_history_next",
        "_history_end",
        "_history_after",
        "_after",
        "_buffer",
        "_maxsize",
        "_gap",
        "_waiter",
        "_sink_closed",
        "_closed",
        "_history_last",
        "_history_end_seq",
    )

    def __init__(self, sink: InMemorySink, after_sequence: int, maxsize: int) -> None:
        self._sink = sink
        # History is read by index from the append-only list, never copied. Indices count
        # from the sink's first event ever (``trim_through`` drops a prefix, not the count).
        self._history_next = sink._base + sink._first_index_after(after_sequence)
        if sink._base and after_sequence < sink._trimmed_through:
            self._history_next = sink._base - 1  # some are trimmed already: a Missed comes first
        self._history_end = sink._base + len(sink.events)
        self._history_after = after_sequence
        self._history_last = after_sequence  # the last history event returned
        self._history_end_seq = sink._last_seq  # the last event of the history part
        self._after = after_sequence  # live events at or below it are skipped (reconnects)
        self._buffer: deque[Event | Missed] = deque()
        self._maxsize = maxsize
        self._gap: list[int] | None = None  # [count, first, last] of events being dropped
        self._waiter: asyncio.Future[None] | None = None
        self._sink_closed = False
        self._closed = False

    # -- fed by the sink (synchronous, never blocks) ------------------------------------

    def _push(self, event: Event) -> None:
        if self._after >= 0:
            if event.sequence <= self._after:
                return
            self._after = -1
        buf = self._buffer
        if len(buf) >= self._maxsize:
            seq = event.sequence
            gap = self._gap
            if gap is None:
                self._gap = [1, seq, seq]
            else:
                gap[0] += 1
                gap[2] = seq
            return
        if self._gap is not None:
            # Room again: mark the gap in place so order is kept (bound is maxsize + 1).
            count, first, last = self._gap
            buf.append(Missed(count, first, last))
            self._gap = None
        buf.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _end(self) -> None:
        self._sink_closed = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- consumer side --------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Items buffered for this subscriber (history not yet read excluded)."""
        return len(self._buffer)

    def __aiter__(self) -> AsyncIterator[Event | Missed]:
        return self

    async def __anext__(self) -> Event | Missed:
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._history_next < self._history_end:
                base = self._sink._base
                if self._history_next < base:
                    # Trimmed from memory before this reader got to them: say which, so
                    # the reader takes them from where they are kept (the recording).
                    self._history_next = base
                    first = self._history_last + 1
                    self._history_last = min(self._sink._trimmed_through, self._history_end_seq)
                    return Missed(self._history_last - first + 1, first, self._history_last)
                event = self._sink.events[self._history_next - base]
                self._history_next += 1
                if event.sequence <= self._history_after:
                    continue  # only when several runs interleave (unordered sink)
                self._history_last = event.sequence
                return event
            if self._buffer:
                return self._buffer.popleft()
            if self._gap is not None:
                count, first, last = self._gap
                self._gap = None
                return Missed(count, first, last)
            if self._sink_closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def close(self) -> None:
        """Unsubscribe: the sink forgets this subscriber; iteration ends at once."""
        if self._closed:
            return
        self._closed = True
        self._buffer.clear()
        self._gap = None
        self._sink._unsubscribe(self)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class InMemorySink:
    """Keeps every event in ``events`` (emit order; a prefix can be dropped with
    ``trim_through``) and serves live subscriptions.

    ``emit`` after ``close`` raises :class:`SinkError`; ``close`` is idempotent.
    """

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._subs: list[Subscription] = []
        self._closed = False
        self._last_seq = -1
        self._ordered = True  # sequences strictly increase, so bisect works
        self._base = 0  # events dropped from the front by trim_through
        self._trimmed_through = -1

    async def emit(self, event: Event) -> None:
        if self._closed:
            raise SinkError("InMemorySink is closed")
        seq = event.sequence
        if seq <= self._last_seq:
            self._ordered = False
        self._last_seq = seq
        self.events.append(event)
        for sub in self._subs:
            sub._push(event)

    async def emit_many(self, events: Sequence[Event]) -> None:
        """``emit`` for each of ``events``, in order, in one step."""
        if self._closed:
            raise SinkError("InMemorySink is closed")
        if not events:
            return
        last = self._last_seq
        for event in events:
            seq = event.sequence
            if seq <= last:
                self._ordered = False
            last = seq
        self._last_seq = last
        self.events.extend(events)
        for sub in self._subs:
            for event in events:
                sub._push(event)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for sub in self._subs:
            sub._end()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def subscriber_count(self) -> int:
        return len(self._subs)

    def subscribe(self, *, after_sequence: int = -1, maxsize: int = 10_000) -> Subscription:
        """A live view: recorded events with sequence > ``after_sequence``, then new ones.

        Synchronous, so nothing can be emitted between taking the history and registering:
        no gap and no duplicate at the seam. ``maxsize`` bounds the live buffer.
        """
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize}")
        sub = Subscription(self, after_sequence, maxsize)
        if self._closed:
            sub._end()
        else:
            self._subs.append(sub)
        return sub

    def events_after(self, sequence: int) -> list[Event]:
        """Recorded events with sequence > ``sequence``, in emit order (gap refill)."""
        return self.events[self._first_index_after(sequence) :] if self._ordered else [
            e for e in self.events if e.sequence > sequence
        ]

    def trim_through(self, sequence: int) -> int:
        """Forget the events up to ``sequence`` (they are kept elsewhere: a hub's recording);
        a subscriber still reading them is told with a :class:`Missed`. Only for a sink whose
        sequences increase (one run). Returns how many were dropped."""
        if not self._ordered:
            raise ValueError("trim_through needs sequences in order (one run per sink)")
        n = bisect_right(self.events, sequence, key=_sequence)
        if n:
            self._trimmed_through = self.events[n - 1].sequence
            del self.events[:n]
            self._base += n
        return n

    def _first_index_after(self, sequence: int) -> int:
        if sequence < 0:
            return 0
        if self._ordered:
            return bisect_right(self.events, sequence, key=_sequence)
        return 0  # several runs interleaved: callers filter by sequence instead

    def _unsubscribe(self, sub: Subscription) -> None:
        try:
            self._subs.remove(sub)
        except ValueError:
            pass
