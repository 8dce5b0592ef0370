"""JSONL recordings read on demand: ``JsonlEvents`` (one run as a Sequence, for replay) and
``JsonlLog`` (the EventLog of a JSONL file).

Opening a JSONL recording for replay does not decode it. One pass counts its lines in blocks
of about ``BLOCK`` bytes (``bytes.count``, C speed: about 0.2 s for a million events); a block
whose every ``"runId"`` names the run and whose every line starts an object holds only that
run's lines, and only its line count is kept. A block with anything else (another run's lines,
blank or stray lines) is read line by line once, keeping the positions of the run's lines and
reporting a line that is not JSON as skipped, as ``replay_from_jsonl`` does. Events are then
decoded a block at a time when asked for, and only the last few blocks are kept. A line that
passed the scan but does not decode stays in its position as an Event with no payload and is
counted on ``damaged`` (as a damaged SQLite row is).

``JsonlLog``: reading it the first time reads every line once to index (run, sequence) ->
position, then ``events`` reads a run back in sequence order and ``runs`` / ``resolve`` answer
from the index. ``append`` writes the events whose key is not stored yet as one write of their
lines, flushed to the operating system (a killed process loses nothing appended), fsynced too
when ``synchronous="FULL"`` (a power cut neither; the default). A run's next events (each
sequence above what its run holds) are written without a look-up; the index catches up with
the file's new lines when a reader or a possible duplicate asks (only those are read). A log that is not ``open`` opens the file for each append; ``open``
holds it for the log's life with an exclusive advisory lock (POSIX), as a recording JSONL sink
(``goldfive.sinks.JSONLPersistenceSink``, a RecordingSink over this log) does: no other writer
interleaves lines in it (their append raises SinkError), and ``open(mode="write")`` starts the
file empty without reading it. A failed write is cut back off the file, so a retry of the batch
leaves neither a torn line nor a line twice.

A line is one protobuf-JSON object (``encode_line``; ``decode_line`` reads it back, old
recordings included); ``replay_from_jsonl`` reads a whole file, skipping and reporting what
is not an event.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import AsyncIterator, Sequence
from typing import IO, Literal

from google.protobuf import json_format

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.store import locks
from goldfive.store.history import CHUNK
from goldfive.store.jsonl_read import (
    JsonlEvents,
    JsonlScan,
    Line,
    ReplayResult,
    decode_line,
    encode_line,
    line_of,
    replay_from_jsonl,
    scan_jsonl,
)
from goldfive.store.locks import LockHolder
from goldfive.store.naming import match_run
from goldfive.store.provenance import Writers
from goldfive.store.sqlite import RunInfo

try:  # advisory locking is POSIX-only
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "SYNCHRONOUS",
    "JsonlEvents",
    "JsonlLog",
    "JsonlScan",
    "Line",
    "ReplayResult",
    "decode_line",
    "encode_line",
    "line_of",
    "replay_from_jsonl",
    "scan_jsonl",
]

#: When an append is on disk: "NORMAL" (written and flushed to the operating system: survives
#: a killed process) or "FULL" (fsynced too: survives a power cut), as SqliteLog's PRAGMA.
SYNCHRONOUS = ("NORMAL", "FULL")
_MODES: dict[str, Literal["ab", "wb"]] = {"append": "ab", "write": "wb"}

class JsonlLog:
    """The EventLog of a JSONL recording (see the module doc).

    ``synchronous``: "FULL" (an fsync per append) or "NORMAL" (flushed to the operating system
    only). ``writer_thread``: appends run in a worker thread (else on the caller's, as a JSONL
    sink's do: one write per batch is cheaper than a thread hop). ``provenance``: appends record
    their writers in ``<path>.writers`` (a JSONL sink's recording is its one file: not)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        writer: str = "",
        synchronous: str = "FULL",
        writer_thread: bool = True,
        provenance: bool = True,
    ) -> None:
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}, got {synchronous!r}")
        self.path = os.fspath(path)
        self.synchronous = synchronous
        self.writer_thread = writer_thread
        self.provenance = provenance
        #: Who this log's appends are recorded as written by (``write_as`` names another for a
        #: run): ranges in ``<path>.writers``, one JSON line each, written before the events.
        self._writers = Writers(writer)
        self._ranges: dict[str, list[tuple[int, str]]] | None = None
        #: run id -> {sequence: (offset, length)}; runs in order of first appearance.
        self._index: dict[str, dict[int, tuple[int, int]]] | None = None
        self._info: dict[str, list[int]] = {}  # run id -> [count, first_ms, last_ms, last_seq]
        #: Bytes of the file the index holds (up to a line's end), and their lines.
        self._indexed = 0
        self._lines = 0
        #: Each run's highest stored sequence, this log's own appends included (the index may
        #: not hold them yet): an append whose every sequence is above it stores them all.
        self._top: dict[str, int] = {}
        self._top_known = False
        self._end = 0
        #: Lines that are not events (numbered from 1), found when the file was read, and the
        #: number of an unended last line that is not one (0: none).
        self._bad_lines: list[int] = []
        self._torn = 0
        self._locked: dict[str, str] = {}  # run id -> the holder this log took it for
        #: The file held for writing (``open``), locked against other writers.
        self._file: IO[bytes] | None = None
        #: One append at a time: a cancelled caller's write finishes in its thread first.
        self._appending = threading.RLock()

    def __str__(self) -> str:
        return f"JsonlLog({self.path})"

    # -- writing ------------------------------------------------------------------------
    def open(self, mode: Literal["append", "write"] = "append") -> None:
        """Hold the file for writing until ``close``, locked against other writers: "append"
        keeps what it holds (each run's highest sequence read now from the lines' keys, about
        4 µs a line; nothing decoded), "write" starts it empty. SinkError
        naming the file when it cannot be opened or another writer holds it; nothing of the
        file is changed then."""
        if self._file is not None:
            return
        if mode not in _MODES:
            raise ValueError(f"mode {mode!r} is not one of {sorted(_MODES)}")
        try:
            # appending even for "write": the file is emptied once the lock is ours, never under
            # another writer's feet; unbuffered: a batch is one write, nothing left in a buffer
            f = open(self.path, "a+b", buffering=0)  # noqa: SIM115 - held until close
        except OSError as exc:
            raise SinkError(f"cannot open JSONL recording {self.path!r}: {exc.strerror or exc}") from exc
        try:
            _lock_file(f, self.path)
            if mode == "write":
                f.truncate(0)
                self._index, self._info, self._bad_lines, self._top = {}, {}, [], {}
                self._indexed = self._lines = self._end = 0
                self._top_known = True
                if self.provenance and os.path.exists(self.path + ".writers"):
                    os.truncate(self.path + ".writers", 0)
                self._ranges = {}
            else:
                if self._index is None:  # each run's highest sequence: not the index, several
                    self._top = _tops_of(self.path)  # times cheaper (read when a reader asks)
                    self._top_known = True
                self._end = _end_line(f)
        except OSError as exc:
            f.close()
            raise SinkError(f"cannot use JSONL recording {self.path!r}: {exc.strerror or exc}") from exc
        except BaseException:
            f.close()
            raise
        self._file = f

    async def append(self, events: Sequence[Event]) -> int:
        if not self.writer_thread:
            return self._append([line_of(ev) for ev in events])
        return await asyncio.to_thread(lambda: self._append([line_of(ev) for ev in events]))

    async def append_lines(self, lines: Sequence[Line]) -> int:
        """``append`` of events encoded already (``line_of``: a JSONL sink encodes each at
        emit, so the record is fixed then and the event need not be copied)."""
        if not self.writer_thread:
            return self._append(lines)
        return await asyncio.to_thread(self._append, lines)

    def _append(self, lines: Sequence[Line]) -> int:
        with self._appending:
            # the common case, a run's next events: above what each run has stored, nothing
            # to look up; the index is caught up from the file when a reader asks (``_load``)
            tops = None if not self._top_known or self.provenance else _rising(lines, self._top)
            if tops is None:
                index = self._load()
                new = _unstored(lines, index)
                if not new:
                    return 0
                if self.provenance:
                    self._note_writers(new, index)
            else:
                new = lines if isinstance(lines, list) else list(lines)
            data = ("\n".join([line[2] for line in new]) + "\n").encode("utf-8")
            if self._file is not None:
                offset = self._end
                self._write(self._file, data, offset, len(new))
            else:  # not held: open for this append, locked while writing
                try:
                    f = open(self.path, "a+b", buffering=0)  # noqa: SIM115 - closed below
                except OSError as exc:
                    raise SinkError(f"writing {len(new)} events to {self.path} failed: {exc.strerror or exc}") from exc
                with f:
                    try:
                        _lock_file(f, self.path)
                        offset = _end_line(f)
                    except OSError as exc:
                        raise SinkError(f"writing {len(new)} events to {self.path} failed: {exc.strerror or exc}") from exc
                    self._write(f, data, offset, len(new))
            self._end = offset + len(data)
            if tops is not None:
                self._top.update(tops)
            else:
                top = self._top
                for run_id, seq, _line in new:
                    if seq > top.get(run_id, -1):
                        top[run_id] = seq
            return len(new)

    def _write(self, f: IO[bytes], data: bytes, offset: int, n: int) -> None:
        """``data`` at the end of ``f`` (at ``offset``), flushed, fsynced if FULL; a failed
        write is cut back off (a retry leaves no torn line)."""
        try:
            view = memoryview(data)
            while view:  # an unbuffered write may take part of it
                view = view[f.write(view) or 0 :]
            if self.synchronous == "FULL":
                os.fsync(f.fileno())
        except OSError as exc:
            try:
                os.ftruncate(f.fileno(), offset)
            except OSError:
                pass  # a file that cannot be cut: the torn line is reported as one when read
            raise SinkError(f"writing {n} events to {self.path} failed: {exc.strerror or exc}") from exc

    # -- the index ------------------------------------------------------------------------
    def _load(self) -> dict[str, dict[int, tuple[int, int]]]:
        """The index, caught up with the file: its lines past ``_indexed`` read once (all of
        them the first time)."""
        with self._appending:
            if self._index is None:
                self._index, self._indexed, self._lines = {}, 0, 0
            index = self._index
            try:
                f = open(self.path, "rb")  # noqa: SIM115 - closed below
            except FileNotFoundError:
                return index
            with f:
                f.seek(self._indexed)
                offset, number = self._indexed, self._lines
                self._torn = 0
                for raw in f:
                    number += 1
                    line = raw.rstrip(b"\n")
                    if line.strip():
                        try:
                            ev = decode_line(line)
                        except (ValueError, json_format.ParseError, RecursionError):
                            if not raw.endswith(b"\n"):  # the last line, unended (torn, or being written): read
                                self._torn = number  # again once it ends
                                number -= 1
                                break
                            self._bad_lines.append(number)
                        else:
                            ts = ev.emitted_at
                            self._note(ev.run_id, ev.sequence, ts.seconds * 1000 + ts.nanos // 1_000_000, offset, len(line))
                    offset += len(raw)
                self._indexed, self._lines = offset, number
                self._top_known = True
                self._end = max(self._end, offset)
            return index

    def _note(self, run_id: str, seq: int, ms: int, offset: int, length: int) -> None:
        assert self._index is not None
        run = self._index.get(run_id)
        if run is None:
            run = self._index[run_id] = {}
        if seq in run:
            return  # the first one stays, as in the other logs
        run[seq] = (offset, length)
        if seq > self._top.get(run_id, -1):
            self._top[run_id] = seq
        info = self._info.get(run_id)
        if info is None:
            self._info[run_id] = [1, ms, ms, seq]
        else:
            info[0] += 1
            if ms < info[1]:
                info[1] = ms
            if ms > info[2]:
                info[2] = ms
            if seq > info[3]:
                info[3] = seq

    # -- provenance -------------------------------------------------------------------------
    @property
    def writer(self) -> str:
        """Who this log records its appends as written by, unless ``write_as`` says."""
        return self._writers.default

    def write_as(self, run_id: str, writer: str, from_sequence: int = 0) -> None:
        """Record ``run_id``'s events from ``from_sequence`` on as written by ``writer``: the
        name of a credential the caller verified, never one a peer sent."""
        self._writers.assign(run_id, writer, from_sequence)

    def _load_writers(self) -> dict[str, list[tuple[int, str]]]:
        if self._ranges is not None:
            return self._ranges
        ranges: dict[str, list[tuple[int, str]]] = {}
        try:
            with open(self.path + ".writers", "rb") as f:
                for raw in f:
                    try:
                        d = json.loads(raw)
                        run_id, start, writer = d["run"], d["from"], d["writer"]
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn last line: its events were not written after it
                    if isinstance(run_id, str) and isinstance(start, int) and isinstance(writer, str):
                        ranges.setdefault(run_id, []).append((start, writer))
        except FileNotFoundError:
            pass
        self._ranges = ranges
        return ranges

    def _note_writers(self, new: list[Line], index: dict[str, dict[int, tuple[int, int]]]) -> None:
        """Before the events are written: a range line for each run whose writer changes."""
        ranges = self._load_writers()
        added, lasts = self._writers.ranges(
            new,
            lambda run_id: ranges[run_id][-1] if ranges.get(run_id) else None,
            lambda run_id, seq: any(q < seq for q in index.get(run_id, ())),
        )
        if not added:
            self._writers.stored(lasts)
            return
        data = b"".join(json.dumps({"run": r, "from": q, "writer": w}).encode() + b"\n" for r, q, w in added)
        try:
            with open(self.path + ".writers", "ab") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise SinkError(f"writing {len(new)} events to {self.path} failed (their writers, first): {exc.strerror or exc}") from exc
        for r, q, w in added:
            ranges.setdefault(r, []).append((q, w))
        self._writers.stored(lasts)

    async def writers(self, run_id: str) -> list[tuple[int, str]]:
        """Who wrote the run's events: (from_sequence, writer) ranges, in order ([] when the
        log does not record them: ``provenance=False``)."""
        self._ranges = None  # another log may have written since
        return sorted(await asyncio.to_thread(lambda: list(self._load_writers().get(run_id, []))))

    async def events(self, run_id: str, after: int = -1, *, chunk: int = CHUNK) -> AsyncIterator[Event]:
        index = await asyncio.to_thread(self._load)
        run = index.get(run_id, {})
        wanted = sorted(s for s in run if s > after)
        for i in range(0, len(wanted), chunk):
            for ev in await asyncio.to_thread(self._read, [run[s] for s in wanted[i : i + chunk]]):
                yield ev

    def _read(self, spans: list[tuple[int, int]]) -> list[Event]:
        with open(self.path, "rb") as f:
            out = []
            for offset, length in spans:
                f.seek(offset)
                out.append(decode_line(f.read(length)))
            return out

    async def runs(self) -> list[RunInfo]:
        await asyncio.to_thread(self._load)
        infos = [RunInfo(rid, n, first, last, seq) for rid, (n, first, last, seq) in self._info.items()]
        return sorted(infos, key=lambda r: (r.first_emitted_at_ms, r.run_id))

    async def resolve(self, ref: str) -> str:
        return match_run([r.run_id for r in await self.runs()], ref, self.path)

    async def check(self) -> str | None:
        """The lines of the file that are not events (a torn last line, a corrupt one)."""
        await asyncio.to_thread(self._load)
        bad = self._bad_lines + ([self._torn] if self._torn else [])
        if not bad:
            return None
        shown = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
        return f"{len(bad)} line{'s' if len(bad) != 1 else ''} of {self.path} {'are' if len(bad) != 1 else 'is'} not an event (line {shown})"

    async def lock(self, run_id: str, holder: str) -> LockHolder | None:
        """Take ``run_id``'s lock for ``holder``: a lock file next to the recording
        (goldfive.store.locks.take_file). None when it holds it now, else who does."""
        if self._locked.get(run_id) == holder:
            return None
        held = await asyncio.to_thread(locks.take_file, self.path, run_id, holder)
        if held is None:
            self._locked[run_id] = holder
        return held

    async def unlock(self, run_id: str, holder: str) -> None:
        if self._locked.get(run_id) == holder:
            del self._locked[run_id]
            await asyncio.to_thread(locks.drop_file, self.path, run_id, holder)

    async def close(self) -> None:
        for run_id, holder in list(self._locked.items()):
            await self.unlock(run_id, holder)
        if self._file is not None:
            with self._appending:  # (a cancelled caller's write finishes first)
                self._file.close()  # the advisory lock goes with the descriptor
            self._file = None
        self._index = None
        self._torn = 0
        self._top, self._top_known = {}, False
        self._indexed = self._lines = 0
        self._ranges = None
        self._info = {}
        self._bad_lines = []


def _unstored(lines: Sequence[Line], index: dict[str, dict[int, tuple[int, int]]]) -> list[Line]:
    """``lines`` whose (run, sequence) ``index`` does not hold, the first of each key."""
    new: list[Line] = []
    keys: set[tuple[str, int]] = set()
    empty: dict[int, tuple[int, int]] = {}
    for line in lines:
        run_id, seq = line[0], line[1]
        if seq in index.get(run_id, empty):
            continue
        key = (run_id, seq)
        if key in keys:
            continue
        keys.add(key)
        new.append(line)
    return new


def _rising(lines: Sequence[Line], top: dict[str, int]) -> dict[str, int] | None:
    """Each run's highest sequence in ``lines`` when every line's sequence is above the one
    before it of its run and above what ``top`` says the run has stored (then none of them is
    stored or repeated); None otherwise (they must be looked up)."""
    last: dict[str, int] = {}
    run: str | None = None
    prev = -1
    for line in lines:  # (per event: a batch is mostly one run's, looked up when it changes)
        run_id, seq = line[0], line[1]
        if run_id != run:
            if run is not None:
                last[run] = prev
            run = run_id
            got = last.get(run_id)
            prev = top.get(run_id, -1) if got is None else got
        if seq <= prev:
            return None
        prev = seq
    if run is not None:
        last[run] = prev
    return last


def _tops_of(path: str) -> dict[str, int]:
    """Each run's highest sequence in the file, from each line's top-level keys (no event is
    decoded). A line that names a run and a sequence counts even if it is not an event: an
    append at or below it is looked up in the index then."""
    tops: dict[str, int] = {}
    with open(path, "rb") as f:
        for raw in f:
            # the keys as encode_line writes them, first on the line (sequence 0 is left out)
            m = _KEYS.match(raw)
            if m is not None and (m[2] is not None or b'"sequence"' not in raw):
                run_id: object = m[1].decode("utf-8", "replace")
                seq: object = m[2] or 0
            else:  # any other shape of line: read whole
                try:
                    obj = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(obj, dict):
                    continue
                run_id, seq = obj.get("runId", obj.get("run_id")), obj.get("sequence", 0)
            try:
                n = int(seq)  # type: ignore[call-overload]  # an int64 is a string in protobuf's JSON
            except (TypeError, ValueError):
                continue
            if isinstance(run_id, str) and n > tops.get(run_id, -1):
                tops[run_id] = n
    return tops


_KEYS = re.compile(rb'\{"eventId":"[^"\\]*","runId":"([^"\\]*)"(?:,"sequence":"(\d+)")?[,}]')


def _lock_file(f: IO[bytes], path: str) -> None:
    """An exclusive advisory lock on ``f`` (POSIX), or SinkError: another writer holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise SinkError(f"{path} is locked by another writer: {exc}") from exc


def _end_line(f: IO[bytes]) -> int:
    """Where the next line of ``f`` (opened to append) starts: its end, after a newline added
    to a torn last line (a crash mid-write), which stays a line that is not an event."""
    end = f.seek(0, os.SEEK_END)
    if end and os.pread(f.fileno(), 1, end - 1) != b"\n":
        f.write(b"\n")
        end += 1
    return end
