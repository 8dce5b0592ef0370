"""What the persistence sinks share: buffer events, write them in batches (at a size
threshold, on a short timer, on ``flush`` and on ``close``), and keep a write failure to raise
from the next call instead of swallowing it."""

from __future__ import annotations

import asyncio
import logging
from typing import Generic, TypeVar

from goldfive.errors import SinkError

T = TypeVar("T")
log = logging.getLogger("goldfive.sinks")


class BatchingSink(Generic[T]):
    """Subclasses implement ``_write_batch`` (and ``_can_write`` / ``_release`` if needed)."""

    def __init__(self, *, flush_interval: float, batch_size: int) -> None:
        self.flush_interval = flush_interval
        self.batch_size = batch_size
        self.errors: list[str] = []
        self.written = 0
        self._pending: list[T] = []
        self._timer: asyncio.TimerHandle | None = None
        self._failure: SinkError | None = None
        self._closed = False

    # -- the sink API -------------------------------------------------------------------
    async def flush(self) -> None:
        """Write everything pending now."""
        self._flush()
        self._raise_failure()

    async def close(self) -> None:
        """Write what is pending and release the storage. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._flush()
        finally:
            self._release()
        self._raise_failure()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pending(self) -> int:
        return len(self._pending)

    # -- for subclasses -----------------------------------------------------------------
    def _add(self, item: T) -> None:
        """Queue one item; the caller's emit checked nothing else."""
        if self._closed:
            raise SinkError(f"{self} is closed")
        self._raise_failure()
        self._pending.append(item)
        if len(self._pending) >= self.batch_size:
            self._flush()
            self._raise_failure()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.flush_interval, self._on_timer)

    def _write_batch(self, batch: list[T]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _can_write(self) -> bool:
        return True

    def _release(self) -> None:
        """Close the file or connection (after the final flush)."""

    def _fail(self, error: SinkError, *, quiet: bool = False) -> None:
        """Record a failure: logged (unless ``quiet``), listed, and the first one raised
        from the next call."""
        if not quiet:
            log.error("%s: %s", type(self).__name__, error)
        self.errors.append(str(error))
        if self._failure is None:
            self._failure = error

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    # -- internals ----------------------------------------------------------------------
    def _on_timer(self) -> None:
        self._timer = None
        self._flush()  # a failure is recorded and raised from the next call

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending or not self._can_write():
            return
        batch, self._pending = self._pending, []
        self._write_batch(batch)
