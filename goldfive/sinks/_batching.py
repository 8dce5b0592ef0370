"""What the persistence sinks share: buffer events, write them in batches (at a size
threshold, on a short timer, on ``flush`` and on ``close``), and keep a write failure to raise
from the next call instead of swallowing it.

A batch that could not be written stays pending for the next flush, but never more than
``max_pending`` items: past the bound the oldest unwritten items are dropped and counted on
``dropped`` (logged once per episode). ``write_error`` says why writing fails while it does;
a long failure is logged when it starts and when it ends, not once per batch.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Generic, TypeVar

from goldfive.errors import SinkError
from goldfive.store.recording_sink import MAX_PENDING

T = TypeVar("T")
log = logging.getLogger("goldfive.sinks")

_KEEP_ERRORS = 100


class BatchingSink(Generic[T]):
    """Subclasses implement ``_write_batch`` (and ``_can_write`` / ``_release`` if needed)."""

    def __init__(self, *, flush_interval: float, batch_size: int, max_pending: int = MAX_PENDING) -> None:
        if max_pending < batch_size:
            raise ValueError(f"max_pending ({max_pending}) must be at least batch_size ({batch_size})")
        self.flush_interval = flush_interval
        self.batch_size = batch_size
        self.max_pending = max_pending
        #: The most recent failures (at most 100).
        self.errors: list[str] = []
        self.written = 0
        #: Unwritten items dropped because ``max_pending`` was reached.
        self.dropped = 0
        #: Why the last write failed; "" once a write succeeds again.
        self.write_error = ""
        self._pending: list[T] = []
        self._timer: asyncio.TimerHandle | None = None
        self._failure: SinkError | None = None
        self._closed = False
        #: A write is running in a worker thread (SQLite, ``writer_thread``): no other write
        #: may start meanwhile; what arrives stays pending for the next flush.
        self._writing = False

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
        self._pending.append(item)  # kept even when an earlier failure is raised below
        if len(self._pending) > self.max_pending:
            self._bound()
        if len(self._pending) >= self.batch_size:
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.flush_interval, self._on_timer)
        self._raise_failure()

    def _add_many(self, items: list[T]) -> None:
        """Queue several items at once: the same as ``_add`` for each, with one size check
        (a batch past ``batch_size`` is written whole, in one transaction)."""
        if self._closed:
            raise SinkError(f"{self} is closed")
        if not items:
            return
        self._pending.extend(items)
        if len(self._pending) > self.max_pending:
            self._bound()
        if len(self._pending) >= self.batch_size:
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.flush_interval, self._on_timer)
        self._raise_failure()

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
        del self.errors[:-_KEEP_ERRORS]
        if self._failure is None:
            self._failure = error

    def _write_failed(self, batch: list[T], error: SinkError) -> None:
        """Keep ``batch`` for the next flush (within ``max_pending``) and record ``error``;
        logged only when writing starts to fail, not for every batch after."""
        self._pending[:0] = batch
        first = not self.write_error
        self.write_error = str(error)
        self._fail(error, quiet=not first)
        self._bound()

    def _write_succeeded(self) -> None:
        if self.write_error:
            log.warning("%s: writing works again (%d unwritten events dropped meanwhile)", self, self.dropped)
            self.write_error = ""

    def _bound(self) -> None:
        excess = len(self._pending) - self.max_pending
        if excess > 0:
            if not self.dropped:
                log.error("%s: %d events wait to be written; dropping the oldest beyond that", self, self.max_pending)
            del self._pending[:excess]
            self.dropped += excess

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
        if self._writing or not self._pending or not self._can_write():
            return
        batch, self._pending = self._pending, []
        self._write_batch(batch)
