"""What a hub on PostgreSQL records its runs with (goldfive.hub.fleet)."""

from __future__ import annotations

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store.postgres import PostgresSink, PostgresStore

__all__ = ["FleetRecorder"]


class FleetRecorder:
    """What a hub on PostgreSQL records with: one PostgresSink for every run of this hub,
    announcing each write to the other hubs. The shape of RunRecorder (emit, commit, health),
    so HubService and HostedRun use either."""

    def __init__(self, store: PostgresStore, hub_id: str) -> None:
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
        await self.sink.emit(event)  # buffers; writes are retried by the timer and by commit

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
