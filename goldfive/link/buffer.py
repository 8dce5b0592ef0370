"""EventBuffer: a connected run's events the hub has not confirmed yet, in sequence order.

Up to ``max_memory`` events are held in memory. Past that bound the oldest go to a spill file
on disk (length-prefixed serialized events, appended in order), so a run whose hub is away for
long keeps every event without growing without limit in memory: nothing is dropped. The spill
file always holds a contiguous run of older sequences than the memory part; it is read back
(in order) when the hub asks for a resend, and deleted once the hub confirmed all of it.
"""

from __future__ import annotations

import logging
import os
import struct
import tempfile
from collections import deque
from itertools import islice
from collections.abc import Iterator
from pathlib import Path

from goldfive.pb.goldfive.v1.events_pb2 import Event

__all__ = ["DEFAULT_MAX_MEMORY", "EventBuffer"]

log = logging.getLogger("goldfive.hub")

#: Unconfirmed events a runner keeps in memory before spilling the oldest to disk.
DEFAULT_MAX_MEMORY = 10_000
_LEN = struct.Struct(">I")


class EventBuffer:
    """Unconfirmed events: ``append`` in sequence order, ``after`` to resend, ``forget_through``
    when the hub confirms."""

    def __init__(self, max_memory: int = DEFAULT_MAX_MEMORY, spill_dir: str | os.PathLike[str] | None = None) -> None:
        if max_memory < 1:
            raise ValueError(f"max_memory must be >= 1, got {max_memory}")
        self.max_memory = max_memory
        self._spill_dir = spill_dir
        self._memory: deque[Event] = deque()
        self._spill_path: Path | None = None
        self._spill_first = -1  # sequences in the spill file: _spill_first.._spill_last
        self._spill_last = -1
        self._spill_count = 0
        self._floor = -1  # confirmed through here: never handed out again
        #: Events written to disk so far (a run that lived through a long hub outage).
        self.spilled_total = 0

    # -- size ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._memory) + self._spilled_now

    @property
    def _spilled_now(self) -> int:
        if self._spill_path is None:
            return 0
        return self._spill_last - max(self._spill_first - 1, self._floor)

    @property
    def spill_path(self) -> Path | None:
        """The spill file while it holds unconfirmed events."""
        return self._spill_path

    @property
    def last_sequence(self) -> int:
        if self._memory:
            return self._memory[-1].sequence
        return self._spill_last if self._spill_path is not None else self._floor

    @property
    def first_sequence(self) -> int:
        """The oldest unconfirmed sequence held (-1 when empty)."""
        if self._spill_path is not None:
            return max(self._spill_first, self._floor + 1)
        return self._memory[0].sequence if self._memory else -1

    # -- writing -------------------------------------------------------------------------
    def append(self, event: Event) -> None:
        self._memory.append(event)
        if len(self._memory) > self.max_memory:
            self._spill(self._memory.popleft())

    def _spill(self, event: Event) -> None:
        if self._spill_path is None:
            fd, name = tempfile.mkstemp(prefix=f"goldfive-hub-{event.run_id[:16]}-", suffix=".spill", dir=self._spill_dir)
            os.close(fd)
            self._spill_path = Path(name)
            self._spill_first = event.sequence
            log.warning(
                "hub unreachable for long: more than %d unconfirmed events; the oldest go to %s (none is dropped)",
                self.max_memory,
                name,
            )
        data = event.SerializeToString()
        with self._spill_path.open("ab") as f:
            f.write(_LEN.pack(len(data)) + data)
        self._spill_last = event.sequence
        self._spill_count += 1
        self.spilled_total += 1

    # -- reading -------------------------------------------------------------------------
    def after(self, sequence: int, limit: int) -> list[Event]:
        """Up to ``limit`` held events with sequence > ``sequence``, in order."""
        out: list[Event] = []
        if self._spill_path is not None and sequence < self._spill_last:
            for ev in self._read_spill():
                if ev.sequence > sequence and ev.sequence > self._floor:
                    out.append(ev)
                    if len(out) >= limit:
                        return out
        memory = self._memory
        if memory:
            # Held in memory: consecutive sequences (one run, gap-free), so the first wanted
            # is found by position instead of by a scan from the oldest.
            skip = min(max(0, sequence + 1 - memory[0].sequence), len(memory))
            if (skip == 0 or memory[skip - 1].sequence <= sequence) and (skip == len(memory) or memory[skip].sequence > sequence):
                out.extend(islice(memory, skip, skip + limit - len(out)))
            else:  # not consecutive after all: scan
                for ev in memory:
                    if ev.sequence > sequence:
                        out.append(ev)
                        if len(out) >= limit:
                            break
        return out

    def has_after(self, sequence: int) -> bool:
        return self.last_sequence > sequence and len(self) > 0

    def _read_spill(self) -> Iterator[Event]:
        assert self._spill_path is not None
        with self._spill_path.open("rb") as f:
            while head := f.read(_LEN.size):
                (n,) = _LEN.unpack(head)
                ev = Event()
                ev.ParseFromString(f.read(n))
                yield ev

    # -- confirmation --------------------------------------------------------------------
    def forget_through(self, sequence: int) -> None:
        """The hub stored every event up to ``sequence``: drop them."""
        if sequence <= self._floor:
            return
        self._floor = sequence
        while self._memory and self._memory[0].sequence <= sequence:
            self._memory.popleft()
        if self._spill_path is not None and sequence >= self._spill_last:
            self.discard_spill()

    def discard_spill(self) -> None:
        if self._spill_path is not None:
            try:
                self._spill_path.unlink()
            except FileNotFoundError:
                pass
            self._spill_path = None
            self._spill_count = 0
