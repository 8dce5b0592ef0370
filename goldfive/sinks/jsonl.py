"""JSONLPersistenceSink: one protobuf-JSON object per line, buffered, and its replay.

Lines are encoded at ``emit`` (so later mutation of the message cannot change the record) and
written in batches: when ``flush_lines`` are pending, when the ``flush_interval`` timer set by
the first pending line fires, on :meth:`flush` and on :meth:`close`. A write failure is never
swallowed: it is logged, kept on ``errors`` and raised as :class:`SinkError` from the next
``emit``/``flush``/``close``. While open, the file holds an exclusive advisory lock (POSIX), so
two sinks cannot interleave lines in one file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from io import BufferedWriter
from pathlib import Path
from typing import Any, Literal, overload

from google.protobuf import json_format

from goldfive.compat import decode_recorded_dict, recorded_dict
from goldfive.errors import ReplayError, SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks._batching import BatchingSink
from goldfive.sinks._json import message_to_dict, message_to_json_line
from goldfive.sinks._json_decode import parse_dict

try:  # advisory locking is POSIX-only; elsewhere the sink simply does not lock
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["JSONLPersistenceSink", "ReplayResult", "decode_line", "encode_line", "replay_from_jsonl"]

_MODES: dict[str, Literal["ab", "wb"]] = {"append": "ab", "write": "wb"}


def _parse_event(obj: dict[str, Any]) -> Event:
    return parse_dict(obj, Event)  # json_format.ParseDict's result, faster


def encode_line(event: Event) -> str:
    """One recording line for ``event`` (no newline): what the sink writes."""
    return message_to_json_line(recorded_dict(message_to_dict(event)))


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


class JSONLPersistenceSink(BatchingSink[str]):
    """Appends (``mode="append"``) or rewrites (``mode="write"``) a JSON Lines recording."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: Literal["append", "write"] = "append",
        *,
        flush_interval: float = 0.05,
        flush_lines: int = 1024,
    ) -> None:
        if mode not in _MODES:
            raise ValueError(f"JSONLPersistenceSink mode {mode!r} is not one of {sorted(_MODES)}")
        super().__init__(flush_interval=flush_interval, batch_size=flush_lines)
        self.path = Path(path)
        self.mode = mode
        try:
            self._file: BufferedWriter = open(self.path, _MODES[mode])  # noqa: SIM115 - lives until close
        except OSError as exc:
            raise SinkError(f"cannot open JSONL recording {os.fspath(self.path)!r}: {exc.strerror or exc}") from exc
        if fcntl is not None:
            try:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                self._file.close()
                raise SinkError(f"{self.path} is locked by another writer: {exc}") from exc

    def __str__(self) -> str:
        return f"JSONLPersistenceSink({self.path})"

    async def emit(self, event: Event) -> None:
        self._add(encode_line(event))

    def _can_write(self) -> bool:
        return not self._file.closed

    def _write_batch(self, lines: list[str]) -> None:
        try:
            self._file.write(("\n".join(lines) + "\n").encode("utf-8"))
            self._file.flush()
        except OSError as exc:
            self._fail(SinkError(f"writing {len(lines)} events to {self.path} failed: {exc}"))
            return
        self.written += len(lines)

    def _release(self) -> None:
        try:
            self._file.close()  # closing the descriptor releases the flock
        except OSError as exc:  # data left from a failed write could not be flushed
            self._fail(SinkError(f"closing {self.path} failed: {exc}"))


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
