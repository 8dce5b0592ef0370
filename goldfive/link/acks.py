"""A HubMux's acks on a ``Hub.ShareAcks`` call of their own (see goldfive.hub.acks).

A hub that takes a shared stream's acks apart names a key in the stream's first frame; the
mux then opens ``ShareAcks`` with that key (and its own token) and sends every ack there, so
an ack does not wait in the shared stream behind the events the hub has not read yet. When
the call fails (the hub refused it, or it broke), the acks not known to be sent go on the
shared stream again, as they would have without it; the hub hands an ack over once whichever
way it came. A hub that names no key (older ones) gets its acks on the shared stream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from goldfive.pb.goldfive.v1 import service_pb2

__all__ = ["ACKS_KEY_HEADER", "AckSide"]

log = logging.getLogger("goldfive.link")

#: The metadata that names the shared stream's key (the hub reads the same name).
ACKS_KEY_HEADER = "goldfive-acks-key"


class AckSide:
    """The ShareAcks call of one shared stream: ``put`` an ack part, written at once."""

    def __init__(self, stub: Any, metadata: Any, key: str, fallback: Callable[[service_pb2.RunnerPart], None]) -> None:
        self._queue: list[service_pb2.RunnerPart] = []
        self._wake = asyncio.Event()
        self._fallback = fallback
        self._call = stub.ShareAcks(metadata=(*(metadata or ()), (ACKS_KEY_HEADER, key)))
        self._task = asyncio.get_running_loop().create_task(self._write(), name="HubMux acks")
        #: Acks written on the call (benches and tests).
        self.sent = 0
        #: The call failed: acks go on the shared stream.
        self.broken = False

    def put(self, part: service_pb2.RunnerPart) -> bool:
        """Queue an ack part for the call; False once the call failed (the caller sends it
        on the shared stream)."""
        if self.broken:
            return False
        self._queue.append(part)
        self._wake.set()
        return True

    async def _write(self) -> None:
        parts: list[service_pb2.RunnerPart] = []
        try:
            while True:
                if not self._queue:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                parts, self._queue = self._queue, []
                await self._call.write(service_pb2.RunnerFrame(parts=parts))
                self.sent += len(parts)
                parts = []
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # refused or broken: the shared stream carries the acks again
            self.broken = True
            log.info("HubMux: the hub's acks call ended (%s); acks go on the shared stream", exc)
            left, self._queue = parts + self._queue, []
            for part in left:
                self._fallback(part)

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._call.cancel()
