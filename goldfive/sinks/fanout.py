"""Fan-out: hand one event to every sink; a failing sink never starves the others.

This is an isolation boundary: an ``Exception`` from one sink is caught, logged on
``goldfive.sinks`` with the sink's class and the event's kind and sequence, and counted on a
:class:`SinkFailures` the caller can read. It is never swallowed silently. Cancellation (and
any other ``BaseException``) propagates at once; the remaining sinks are not called.
Sinks are called one after the other, in list order, so each sees events in sequence order.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Iterable

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.protocols import EventSink

__all__ = ["FanOut", "SINK_FAILURES", "SinkFailures", "close_all", "emit"]

log = logging.getLogger("goldfive.sinks")


class SinkFailures:
    """Failures per sink class name, the total, and the last exception."""

    def __init__(self) -> None:
        self.failures: dict[str, int] = {}
        self.total = 0
        self.last_error: BaseException | None = None

    def record(self, sink: object, exc: Exception, what: str) -> None:
        name = type(sink).__name__
        self.failures[name] = self.failures.get(name, 0) + 1
        self.total += 1
        self.last_error = exc
        # A storage failure the sink described (SinkError) is one line; anything else is a
        # sink's bug, logged with its traceback.
        known = isinstance(exc, SinkError)
        log.error("sink %s failed on %s: %s: %s", name, what, type(exc).__name__, exc, exc_info=None if known else exc)

    def reset(self) -> None:
        self.failures.clear()
        self.total = 0
        self.last_error = None


#: Where the module-level :func:`emit` and :func:`close_all` count failures by default.
SINK_FAILURES = SinkFailures()


def _describe(event: Event) -> str:
    return f"{event.WhichOneof('payload') or 'unknown'} event (run {event.run_id!r}, sequence {event.sequence})"


async def emit(sinks: Iterable[EventSink], event: Event, failures: SinkFailures | None = None) -> None:
    """Emit ``event`` to every sink; failures are isolated, logged and counted."""
    counter = SINK_FAILURES if failures is None else failures
    for sink in sinks:
        try:
            await sink.emit(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: one sink must not starve the others
            counter.record(sink, exc, _describe(event))


async def close_all(sinks: Iterable[EventSink], failures: SinkFailures | None = None) -> None:
    """Close every sink, even when some fail to close; failures are logged and counted."""
    counter = SINK_FAILURES if failures is None else failures
    for sink in sinks:
        try:
            await sink.close()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary, as in emit
            counter.record(sink, exc, "close")


class FanOut:
    """A list of sinks behaving as one sink, with its own failure counts.

    ``failures`` maps sink class name to the number of failed calls; ``last_error`` is the
    most recent exception. A FanOut is itself an EventSink, so it can be nested.
    """

    def __init__(self, sinks: Iterable[EventSink] = ()) -> None:
        self.sinks: list[EventSink] = list(sinks)
        self.counter = SinkFailures()

    @property
    def failures(self) -> dict[str, int]:
        return self.counter.failures

    @property
    def last_error(self) -> BaseException | None:
        return self.counter.last_error

    def add(self, sink: EventSink) -> None:
        self.sinks.append(sink)

    async def emit(self, event: Event) -> None:
        # The module-level emit's loop, inlined: this is on every event's path (one coroutine
        # frame less per event, and nothing at all to do for a run without sinks).
        for sink in self.sinks:
            try:
                await sink.emit(event)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # isolation boundary: one sink must not starve the others
                self.counter.record(sink, exc, _describe(event))

    async def close(self) -> None:
        await close_all(self.sinks, self.counter)
