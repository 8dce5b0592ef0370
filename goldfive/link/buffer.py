"""EventBuffer: a connected run's events the hub has not confirmed yet, in sequence order.

Each event is held serialized, as an entry of ``EventBatch.events`` (goldfive.link.raw): made
once when it is appended and put into every message that carries it as it is. Bytes are not
tracked by the garbage collector, so a busy process's unconfirmed events (at 10,000 events a
second, held for a group commit or a reconnect) do not pass through its old generation and
make its full collections longer and more frequent, as protobuf message objects did.

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
from collections.abc import Iterator, Sequence
from pathlib import Path

from goldfive.link.raw import HEADS as _HEADS, HEADS_UPTO, entry, entry_event_size
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.pb.goldfive.v1.service_pb2 import EventBatch

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
        # Held in memory: each event as an ``EventBatch.events`` entry (goldfive.link.raw).
        # A run's sequences are consecutive, so they are known from the first's (``_first``);
        # ``_seqs`` lists them only once one was not (never from a run, never wrong either).
        self._memory: deque[bytes] = deque()
        self._first = 0
        self._last = -1
        self._seqs: deque[int] | None = None
        self._name = ""  # the run id's start, for the spill file's name
        self._spill_path: Path | None = None
        self._spill_first = -1  # sequences in the spill file: _spill_first.._spill_last
        self._spill_last = -1
        self._spill_count = 0
        self._spill_consecutive = True  # sequences _spill_first, +1, +2, ... (always, from a run)
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
            return self._last
        return self._spill_last if self._spill_path is not None else self._floor

    @property
    def first_sequence(self) -> int:
        """The oldest unconfirmed sequence held (-1 when empty)."""
        if self._spill_path is not None:
            return max(self._spill_first, self._floor + 1)
        if not self._memory:
            return -1
        return self._seqs[0] if self._seqs is not None else self._first

    # -- writing -------------------------------------------------------------------------
    def append(self, event: Event) -> None:
        """Hold ``event``, serialized now (later changes to the message are not sent)."""
        data = event.SerializeToString()
        n = len(data)
        sequence = event.sequence
        memory = self._memory
        if not memory:
            self._first = sequence
            self._seqs = None
        elif self._seqs is None and sequence != self._last + 1:
            self._seqs = deque(range(self._first, self._last + 1))
        if self._seqs is not None:
            self._seqs.append(sequence)
        self._last = sequence
        memory.append(_HEADS[n] + data if n < HEADS_UPTO else entry(data))
        if len(memory) > self.max_memory:
            self._spill_oldest()
        if not self._name:
            self._name = event.run_id[:16]

    def _pop(self) -> tuple[int, bytes]:
        """The oldest event held in memory, taken out."""
        held = self._memory.popleft()
        if self._seqs is not None:
            return self._seqs.popleft(), held
        self._first += 1
        return self._first - 1, held

    def _spill_oldest(self) -> None:
        sequence, held = self._pop()
        if self._spill_path is None:
            fd, name = tempfile.mkstemp(prefix=f"goldfive-hub-{self._name}-", suffix=".spill", dir=self._spill_dir)
            os.close(fd)
            self._spill_path = Path(name)
            self._spill_first = sequence
            self._spill_consecutive = True
            log.warning(
                "hub unreachable for long: more than %d unconfirmed events; the oldest go to %s (none is dropped)",
                self.max_memory,
                name,
            )
        elif sequence != self._spill_last + 1:
            self._spill_consecutive = False
        size = entry_event_size(held)
        with self._spill_path.open("ab") as f:  # the file holds length-prefixed serialized events
            f.write(_LEN.pack(size))
            f.write(memoryview(held)[len(held) - size :])
        self._spill_last = sequence
        self._spill_count += 1
        self.spilled_total += 1

    # -- reading -------------------------------------------------------------------------
    def after(self, sequence: int, limit: int) -> list[Event]:
        """Up to ``limit`` held events with sequence > ``sequence``, in order (parsed from
        what is held: new messages)."""
        _, held = self.after_entries(sequence, limit)
        return list(EventBatch.FromString(b"".join(held)).events) if held else []

    def after_entries(self, sequence: int, limit: int) -> tuple[Sequence[int], list[bytes]]:
        """``after``'s events as held: their sequences and their ``EventBatch.events`` entries."""
        memory = self._memory
        if self._seqs is None and (self._spill_path is None or sequence >= self._spill_last):
            # Held in memory only, consecutive: the first wanted is found by position.
            skip = min(max(0, sequence + 1 - self._first), len(memory))
            out = list(islice(memory, skip, skip + limit))
            return range(self._first + skip, self._first + skip + len(out)), out
        seqs: list[int] = []
        held: list[bytes] = []
        if self._spill_path is not None and sequence < self._spill_last:
            for seq, data in self._read_spill():
                if seq > sequence and seq > self._floor:
                    seqs.append(seq)
                    held.append(data)
                    if len(held) >= limit:
                        return seqs, held
        in_memory = self._seqs if self._seqs is not None else range(self._first, self._first + len(memory))
        for seq, data in zip(in_memory, memory):
            if seq > sequence:
                seqs.append(seq)
                held.append(data)
                if len(held) >= limit:
                    break
        return seqs, held

    def has_after(self, sequence: int) -> bool:
        return self.last_sequence > sequence and len(self) > 0

    def _read_spill(self) -> Iterator[tuple[int, bytes]]:
        assert self._spill_path is not None
        seq = self._spill_first
        with self._spill_path.open("rb") as f:
            while head := f.read(_LEN.size):
                (n,) = _LEN.unpack(head)
                data = f.read(n)
                if not self._spill_consecutive:  # (never from a run) the sequence is read from the event
                    seq = Event.FromString(data).sequence
                yield seq, entry(data)
                seq += 1

    # -- confirmation --------------------------------------------------------------------
    def forget_through(self, sequence: int) -> None:
        """The hub stored every event up to ``sequence``: drop them."""
        if sequence <= self._floor:
            return
        self._floor = sequence
        memory = self._memory
        if self._seqs is None:
            drop = min(sequence - self._first + 1, len(memory))
            if drop >= len(memory):
                memory.clear()
            else:
                for _ in range(drop):
                    memory.popleft()
            if drop > 0:
                self._first += drop
        else:
            while memory and self._seqs[0] <= sequence:
                self._pop()
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
