"""Reading JSONL recordings: one event per line (``encode_line`` / ``decode_line``, old
recordings included), ``replay_from_jsonl`` (a whole file, skipping and reporting what is not an
event), and ``scan_jsonl`` / ``JsonlEvents``, one run of a large file read on demand for replay.
The scan and the block cache are described in :mod:`goldfive.store.jsonl`'s module doc;
``JsonlLog`` (the EventLog of a JSONL file, its writer) is there too and re-exports all of this.
"""

from __future__ import annotations

import bisect
import json
import os
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from google.protobuf import json_format

from goldfive.compat import decode_recorded_dict, recorded_dict
from goldfive.errors import ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks._json import message_to_dict, message_to_json_line
from goldfive.sinks._json_decode import parse_dict
from goldfive.store.naming import match_run

__all__ = [
    "BLOCK",
    "JsonlEvents",
    "JsonlScan",
    "Line",
    "ReplayResult",
    "decode_line",
    "encode_line",
    "line_of",
    "replay_from_jsonl",
    "scan_jsonl",
]

#: Bytes read per block of the scan (about a thousand events of a chatty run).
BLOCK = 256 * 1024
_CACHED_BLOCKS = 8
_RUN_KEY = b'"runId":"'


def _parse_event(obj: dict[str, Any]) -> Event:
    return parse_dict(obj, Event)  # json_format.ParseDict's result, faster


def encode_line(event: Event) -> str:
    """One recording line for ``event`` (no newline): what JsonlLog writes."""
    return message_to_json_line(recorded_dict(message_to_dict(event)))


#: One event as JsonlLog appends it: (run id, sequence, its line).
Line = tuple[str, int, str]


def line_of(event: Event) -> Line:
    """``event`` encoded for ``JsonlLog.append_lines``."""
    return (event.run_id, event.sequence, encode_line(event))


def decode_line(raw: bytes) -> Event:
    """One recording line read back. A line that is not a goldfive event raises ValueError
    (JSONDecodeError, UnicodeDecodeError), json_format.ParseError or RecursionError (the
    decoders recurse per nesting level: '[' * 100000 exhausts the stack)."""
    obj = json.loads(raw)
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    event = decode_recorded_dict(obj, _parse_event)
    if event.ByteSize() == 0:  # unknown fields are ignored, so any JSON object parses
        raise ValueError("not a goldfive event (no event_id, run_id or payload)")
    return event


@dataclass(frozen=True)
class ReplayResult(Sequence[Event]):
    """The events read back, and the lines that could not be: ``skipped`` of them, each
    described in ``errors`` as ``"line N: reason"``. It is also the sequence of its events
    (``len``, iteration, indexing), as goldfive v1's ``replay_from_jsonl`` list was."""

    events: list[Event] = field(default_factory=list)
    skipped: int = 0
    errors: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.events)

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        return self.events[index]

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)


def replay_from_jsonl(path: str | os.PathLike[str]) -> ReplayResult:
    """Read a recording. Blank lines are ignored; a torn last line (a crash mid-write) and
    corrupt lines anywhere are skipped and reported, never raised. A file that cannot be
    opened raises :class:`ReplayError` naming it."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ReplayError(f"cannot read JSONL recording {os.fspath(path)!r}: {exc.strerror or exc}") from exc
    lines = data.split(b"\n")
    torn_index = len(lines) - 1 if not data.endswith(b"\n") else -1
    events: list[Event] = []
    errors: list[str] = []
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            events.append(decode_line(raw))
        except (ValueError, json_format.ParseError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
            reason = "nested too deeply to read" if isinstance(exc, RecursionError) else str(exc)
            prefix = "torn last line (no newline)" if index == torn_index else "corrupt line"
            errors.append(f"line {index + 1}: {prefix}: {reason}")
    return ReplayResult(events=events, skipped=len(errors), errors=errors)


def _run_id_of(raw: bytes) -> str | None:
    """The top-level run id of one line, or None when the line is not a JSON object."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    rid = obj.get("runId", obj.get("run_id", ""))
    return rid if isinstance(rid, str) else None


@dataclass
class _Block:
    start: int  # byte offset of the block (a line start)
    end: int  # byte offset after its last line
    #: None: every line of the block is the run's. Else the run's lines' offsets in the block.
    lines: array[int] | None
    count: int


@dataclass
class JsonlScan:
    """What one pass over a JSONL file found: the run chosen, its lines by block, every run
    id in order of first appearance, and the lines that are not events."""

    path: str
    run_id: str
    blocks: list[_Block]
    run_ids: list[str]
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


def _last_run_id(f: "os.PathLike[str] | str") -> str | None:
    """The run id of the file's last line that names one (read from its tail)."""
    with open(f, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        tail = 64 * 1024
        while True:
            fh.seek(max(0, size - tail))
            data = fh.read(tail)
            lines = data.split(b"\n")
            if size > tail:
                lines = lines[1:]  # the first may be a partial line
            for raw in reversed(lines):
                if raw.strip() and (rid := _run_id_of(raw)) is not None:
                    return rid
            if size <= tail:
                return None
            tail *= 4


def scan_jsonl(path: str | os.PathLike[str], run_id: str | None = None, *, block: int = BLOCK) -> JsonlScan:
    """Scan ``path`` for ``run_id`` (a full id or a unique prefix; None: the last run in the
    file). ReplayError when the file cannot be read or the run is not in it."""
    name = os.fspath(path)
    try:
        candidate = _last_run_id(path)
    except OSError as exc:
        raise ReplayError(f"cannot read JSONL recording {name!r}: {exc.strerror or exc}") from exc
    if candidate is None:
        candidate = ""
    key = _RUN_KEY + json.dumps(candidate)[1:].encode()  # '"runId":"<id>"'
    # goldfive's event ids are "<run id>:<sequence>:<suffix>" and come first on a line: a block
    # whose every line starts so is the candidate's, found in two passes of bytes.count
    own_line = b'{"eventId":"' + json.dumps(candidate)[1:-1].encode() + b":"
    blocks: list[tuple[int, int, bool, int]] = []  # (start, length, uniform, line count)
    # a mixed block's lines, for choosing another run: (offset, run id or None)
    mixed: dict[int, list[tuple[int, str | None]]] = {}
    seen: dict[str, None] = {}
    skipped, errors = 0, []
    line_no = 0
    try:
        with open(path, "rb") as f:
            pos, size = 0, block
            while True:
                # read from a line start; counted up to the last newline (bytes.count's end
                # argument, no copy), the partial line after it read again by the next block
                f.seek(pos)
                data = f.read(size)
                if not data:
                    break
                end = data.rfind(b"\n") + 1
                if len(data) < size:
                    end = len(data)  # the file's end: a last line without a newline is a torn line
                elif end == 0:
                    size *= 2  # one line longer than a block
                    continue
                size = block
                ends_line = data[end - 1] == 0x0A
                n = data.count(b"\n", 0, end) + (0 if ends_line else 1)
                first = data.startswith(own_line)
                uniform = candidate != "" and (
                    data.count(b"\n" + own_line, 0, end) + first == n
                    or (
                        data.count(_RUN_KEY, 0, end) == data.count(key, 0, end) >= n
                        and data.count(b'\n{"', 0, end) + data.startswith(b'{"') == n
                    )
                )
                if uniform:
                    blocks.append((pos, end, True, n))
                    seen.setdefault(candidate, None)
                else:
                    chunk = data if end == len(data) else data[:end]
                    entries: list[tuple[int, str | None]] = []
                    offset = 0
                    torn = not ends_line
                    raws = chunk.split(b"\n")
                    if not torn:
                        raws.pop()
                    for i, raw in enumerate(raws):
                        if raw.strip():
                            rid = _run_id_of(raw)
                            if rid is None:
                                skipped += 1
                                prefix = "torn last line (no newline)" if torn and i == len(raws) - 1 else "corrupt line"
                                errors.append(f"line {line_no + i + 1}: {prefix}: not a JSON object")
                            else:
                                seen.setdefault(rid, None)
                            entries.append((pos + offset, rid))
                        offset += len(raw) + 1
                    mixed[pos] = entries
                    blocks.append((pos, len(chunk), False, n))
                line_no += n
                pos += end
    except OSError as exc:
        raise ReplayError(f"cannot read JSONL recording {name!r}: {exc.strerror or exc}") from exc
    ids = list(seen)
    if run_id is None:
        chosen = candidate if candidate in seen else (ids[-1] if ids else "")
    else:
        chosen = match_run(ids, run_id, name)
    out: list[_Block] = []
    for start, length, uniform, n in blocks:
        if uniform:
            if chosen == candidate:
                out.append(_Block(start, start + length, None, n))
            continue
        mine = array("q", (off - start for off, rid in mixed[start] if rid == chosen))
        if mine:
            out.append(_Block(start, start + length, mine, len(mine)))
    return JsonlScan(name, chosen, out, ids, skipped, errors)


class JsonlEvents(Sequence[Event]):
    """One run of a JSONL recording as a read-only sequence (in file order), decoded a block
    at a time on demand; see the module doc."""

    def __init__(self, scan: JsonlScan) -> None:
        self.scan = scan
        self.path = scan.path
        self.run_id = scan.run_id
        self._blocks = scan.blocks
        self._firsts = array("q")
        total = 0
        for b in self._blocks:
            self._firsts.append(total)
            total += b.count
        self._len = total
        self._cache: OrderedDict[int, list[Event]] = OrderedDict()
        self._bad: set[int] = set()

    @property
    def damaged(self) -> int:
        """Lines that passed the scan but did not decode, so far (shown as empty events)."""
        return len(self._bad)

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        if isinstance(index, slice):
            return [self[i] for i in range(self._len)[index]]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError(index)
        b = bisect.bisect_right(self._firsts, index) - 1
        events = self._cache.get(b)
        if events is None:
            events = self._read(b)
            self._cache[b] = events
            if len(self._cache) > _CACHED_BLOCKS:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(b)
        return events[index - self._firsts[b]]

    def __iter__(self) -> Iterator[Event]:
        for b in range(len(self._blocks)):
            cached = self._cache.get(b)
            yield from cached if cached is not None else self._read(b)

    def _read(self, b: int) -> list[Event]:
        block = self._blocks[b]
        try:
            with open(self.path, "rb") as f:
                f.seek(block.start)
                data = f.read(block.end - block.start)
        except OSError as exc:
            raise ReplayError(f"cannot read JSONL recording {self.path!r}: {exc.strerror or exc}") from exc
        if block.lines is None:
            raws = data.split(b"\n")
            if data.endswith(b"\n"):
                raws.pop()
        else:
            raws = [data[off : (data.find(b"\n", off) % (len(data) + 1))] for off in block.lines]
        first = self._firsts[b]
        out: list[Event] = []
        for i, raw in enumerate(raws):
            try:
                out.append(decode_line(raw))
            except (ValueError, json_format.ParseError, RecursionError):
                self._bad.add(first + i)
                out.append(Event(run_id=self.run_id))
        return out
