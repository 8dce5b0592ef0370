"""IngressService: the collector end of ``GoldfiveIngress.StreamEvents`` (what GRPCSink feeds).

Each received event is emitted to ``sink`` once: an event whose id was already stored (a
producer resending after a dropped connection) is counted on ``duplicates`` and skipped. The
response's ``received`` counts every event read from the stream, stored or skipped, so the
producer knows how many of the events it sent are safe; a storage failure stops the stream
there and is returned in ``error``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING

import grpc

from goldfive.errors import SinkError
from goldfive.hub.limits import run_id_problem
from goldfive.pb.goldfive.v1 import events_pb2, service_pb2, service_pb2_grpc
from goldfive.protocols import EventSink

if TYPE_CHECKING:
    from goldfive.remote.host import RunHost

__all__ = ["HostIngest", "IngressService"]

log = logging.getLogger("goldfive.remote")


def _key(event: events_pb2.Event) -> str:
    # An event without an id still has a unique (run, sequence) position.
    return event.event_id or f"{event.run_id}/{event.sequence}"


class IngressService(service_pb2_grpc.GoldfiveIngressServicer):
    def __init__(self, sink: EventSink, *, known_event_ids: Iterable[str] = ()) -> None:
        self.sink = sink
        self._seen: set[str] = set(known_event_ids)
        self.stored = 0
        self.duplicates = 0

    async def StreamEvents(
        self,
        request_iterator: AsyncIterator[events_pb2.Event],
        context: grpc.aio.ServicerContext[events_pb2.Event, service_pb2.StreamEventsResponse],
    ) -> service_pb2.StreamEventsResponse:
        received = 0
        checked = None  # the run id last found fine (a stream is mostly one run's events)
        async for event in request_iterator:
            key = _key(event)
            if event.run_id != checked:
                problem = run_id_problem(event.run_id)
                if problem:
                    shown = key if len(key) <= 80 else key[:77] + "..."
                    return service_pb2.StreamEventsResponse(received=received, error=f"event {shown!r} refused: {problem}")
                checked = event.run_id
            if key in self._seen:
                self.duplicates += 1
            else:
                try:
                    await self.sink.emit(event)
                except Exception as exc:  # isolation boundary: the producer keeps and resends it
                    log.error("ingest: storing event %s failed: %s", key, exc)
                    return service_pb2.StreamEventsResponse(
                        received=received, error=f"storing event {key} failed: {exc}"
                    )
                self._seen.add(key)
                self.stored += 1
            received += 1
        return service_pb2.StreamEventsResponse(received=received)


class HostIngest:
    """The sink an IngressService feeds when ``goldfive serve --ingest`` hosts pushed runs:
    each event goes to the run it names, served live like a hosted one. Once the run's
    recording has dropped events (its bound reached while writes fail), the next event raises,
    so the producer is not told it was received (and, the stream ended, keeps it)."""

    def __init__(self, host: RunHost) -> None:
        self.host = host

    async def emit(self, event: events_pb2.Event) -> None:
        # (on every pushed event's path: the run is looked up once, by the host)
        if await self.host.ingest(event):
            run = self.host.get(event.run_id)
            why = run.write_error if run is not None else ""
            raise SinkError(f"the hub's recording of run {event.run_id} is failing ({why}); events were dropped")

    async def close(self) -> None:
        return None
