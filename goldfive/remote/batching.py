"""Group a stream of events into batches: a batch closes at ``max_events`` events, at about
``max_bytes`` encoded bytes, or ``linger`` seconds after its first event, whichever comes first.

History is read as fast as the reader drains it (each batch full); live events wait at most
``linger`` for company. The source is read by one task that stops ``max_events`` ahead of the
reader, so a slow reader never makes the server hold more than about two batches.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from goldfive.pb.goldfive.v1.service_pb2 import EventBatch

__all__ = ["BATCH_BYTES", "BATCH_EVENTS", "BATCH_LINGER_S", "batched", "run_batches"]

BATCH_EVENTS = 1000
#: Well under gRPC's default 4 MB message limit; one bigger event still goes, alone.
BATCH_BYTES = 1 << 20
BATCH_LINGER_S = 0.005


async def batched(
    source: AsyncIterator[Any],
    *,
    max_events: int = BATCH_EVENTS,
    max_bytes: int = BATCH_BYTES,
    linger: float = BATCH_LINGER_S,
) -> AsyncGenerator[list[Any], None]:
    """Lists of the items of ``source`` (protobuf messages: ``ByteSize`` sizes them), in
    order, none empty. Closing the generator stops reading ``source`` and closes it."""
    pending: list[Any] = []
    size = 0
    arrived = asyncio.Event()  # pending holds something (or the source ended)
    room = asyncio.Event()  # pending has room
    room.set()
    ended = False
    failure: BaseException | None = None

    async def pump() -> None:
        nonlocal size, ended, failure
        try:
            async for item in source:
                if len(pending) >= max_events or size >= max_bytes:
                    room.clear()
                    await room.wait()
                pending.append(item)
                size += item.ByteSize()
                arrived.set()
        except Exception as exc:  # handed to the reader, which raises it in its own task
            failure = exc
        finally:
            ended = True
            arrived.set()
            aclose = getattr(source, "aclose", None)
            if aclose is not None:
                await aclose()

    task = asyncio.get_running_loop().create_task(pump(), name="goldfive-batch-pump")
    try:
        while True:
            await arrived.wait()
            if not ended and len(pending) < max_events and size < max_bytes:
                await asyncio.sleep(linger)  # let a live batch gather company
            batch, pending = pending, []
            size = 0
            if not ended:
                arrived.clear()
            room.set()
            if batch:
                yield batch
            elif ended:
                if failure is not None:
                    raise failure
                return
    finally:
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def run_batches(run: Any, after_sequence: int) -> AsyncGenerator[EventBatch, None]:
    """A served run's events after ``after_sequence`` as EventBatch messages. A run only
    recorded in the database is read a chunk at a time, each chunk decoded in one parse
    (``RunHistory.batches``); any other run's ``stream`` is grouped by :func:`batched`."""
    history = run.history
    if history is not None and run.memory is None:  # recorded only: no live tail
        chunks = history.batches(after_sequence, max_bytes=BATCH_BYTES)
        try:
            for batch in chunks:
                yield batch
                await asyncio.sleep(0)  # a long history must not hold the loop between batches
        finally:
            chunks.close()
        return
    groups = batched(run.stream(after_sequence))
    try:
        async for events in groups:
            yield EventBatch(events=events)
    finally:
        await groups.aclose()
