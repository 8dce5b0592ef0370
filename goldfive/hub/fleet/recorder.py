"""What a hub on PostgreSQL records its runs with (goldfive.hub.fleet)."""

from __future__ import annotations

from collections.abc import Sequence

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.postgres import PostgresSink, PostgresStore
from goldfive.store.recorder import HUB_WRITER

__all__ = ["FleetRecorder"]


class FleetRecorder:
    """What a hub on PostgreSQL records with: one PostgresSink (a RecordingSink over the
    store) for every run of this hub, announcing each write to the other hubs. A HubRecorder, as
    RunRecorder is, so HubService and HostedRun use either."""

    def __init__(self, store: PostgresStore, hub_id: str) -> None:
        store.writer = HUB_WRITER  # this hub's own runs; write_as names a runner's credential
        # No bound: every event held here is also held by its runner until confirmed.
        self.sink = PostgresSink(store, batch_size=1000, flush_interval=0.02, max_pending=None, notify=hub_id)

    @property
    def write_error(self) -> str:
        return self.sink.error

    @property
    def unwritten(self) -> int:
        return self.sink.unwritten

    @property
    def dropped(self) -> int:
        return self.sink.dropped

    async def emit(self, event: Event) -> None:
        try:
            await self.sink.emit(event)
        except SinkError:
            pass  # the events are held; writes are retried by the timer and by commit (write_error says why)

    async def emit_many(self, events: Sequence[Event]) -> None:
        """``emit`` for each of ``events``, in order (the sink batches them)."""
        for event in events:
            await self.emit(event)

    def write_as(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """The run's events from ``from_sequence`` on are recorded as ``writer``'s (provenance)."""
        self.sink.store.write_as(run_id, writer, from_sequence)

    async def forget_run(self, run_id: str) -> bool:
        """The store's ``forget_run`` (PostgresStore.forget_run)."""
        return await self.sink.store.forget_run(run_id)

    async def sync(self) -> None:
        await self.commit()

    async def commit(self) -> bool:
        try:
            await self.sink.sync()
        except SinkError:
            return False
        return self.sink.unwritten == 0 and not self.sink.error

    async def close(self) -> None:
        """A run's end: write what is held, but the recorder stays open for the other runs."""
        await self.commit()

    async def shutdown(self) -> None:
        await self.commit()
