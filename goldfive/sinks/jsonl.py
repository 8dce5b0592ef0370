"""JSONLPersistenceSink: one protobuf-JSON object per line, batched, and its replay.

The sink is a :class:`~goldfive.store.recording_sink.RecordingSink` over a
:class:`~goldfive.store.jsonl.JsonlLog`, which owns the file (its line format, ``encode_line``
and ``decode_line``, and ``replay_from_jsonl`` are the log's, re-exported here). ``emit`` encodes
the event's line (so later mutation of the message cannot change the record); the queue is
written as one write of its lines when ``flush_lines`` events are queued, when the
``flush_interval`` timer armed by the first of them fires, on :meth:`flush`, on ``sync`` (a
durable run's state change, unless ``durability="batched"``) and on :meth:`close`. An event
whose (run_id, sequence) the file holds already is not written again (counted on
``duplicates``). A write failure is never swallowed: it is logged, kept on ``errors`` and raised
as :class:`SinkError` from the next ``emit``/``flush``/``close``; the batch is cut back off the
file and kept for the next write. While open, the file holds an exclusive advisory lock (POSIX),
so two sinks cannot interleave lines in one file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from goldfive.store.jsonl import _MODES, JsonlLog, Line, ReplayResult, decode_line, encode_line, line_of, replay_from_jsonl
from goldfive.store.recording_sink import RecordingSink

__all__ = ["DURABILITY", "JSONLPersistenceSink", "ReplayResult", "decode_line", "encode_line", "replay_from_jsonl"]

#: "batched": lines are written by size or timer (a killed process loses the last
#: ``flush_interval`` of them). "normal": a run's state changes are written before the run goes
#: on (survives a killed process). "full": the same, and every write is fsynced (a power cut too).
DURABILITY = ("batched", "normal", "full")


class JSONLPersistenceSink(RecordingSink[Line]):
    """Appends (``mode="append"``) or rewrites (``mode="write"``) a JSON Lines recording."""

    log: JsonlLog

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: Literal["append", "write"] = "append",
        *,
        flush_interval: float = 0.05,
        flush_lines: int = 1024,
        durability: str = "batched",
    ) -> None:
        if mode not in _MODES:
            raise ValueError(f"JSONLPersistenceSink mode {mode!r} is not one of {sorted(_MODES)}")
        if durability not in DURABILITY:
            raise ValueError(f"durability must be one of {', '.join(DURABILITY)}, got {durability!r}")
        # the recording is its one file (no writers file beside it); one write per batch on the
        # caller's thread, as before the sink was a RecordingSink
        jsonl_log = JsonlLog(
            path, synchronous="FULL" if durability == "full" else "NORMAL", writer_thread=False, provenance=False
        )
        super().__init__(jsonl_log, batch_size=flush_lines, flush_interval=flush_interval)
        jsonl_log.open(mode)  # an unusable or locked file is refused now, naming it (SinkError)
        self.path = Path(path)
        self.mode = mode
        self.durability = durability

    def __str__(self) -> str:
        return f"JSONLPersistenceSink({self.path})"

    #: The event encoded now: the record cannot change, and no copy is needed.
    _queued = staticmethod(line_of)

    async def _append(self, batch: list[Line]) -> int:
        return await self.log.append_lines(batch)

    async def sync(self) -> None:
        """A durable run's state change: its lines written before it goes on (not when
        ``durability="batched"``); SinkError when the write failed."""
        if self.durability != "batched":
            await self.flush()
