"""Damaged recordings given to ``goldfive replay``'s loader (``open_recording``): each gives one
clear ReplayError or a count of skipped lines, never a traceback, a RecursionError or a hang.

Every load runs in a worker thread with a time bound, so a loader that blocks (a FIFO) fails
the test instead of wedging the suite.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

from goldfive.errors import ReplayError
from goldfive.recording import Recording, open_recording
from goldfive.sinks.sqlite import SQLitePersistenceSink
from tests.chaos.conftest import Chaos
from tests.chaos.tally import TALLY
from tests.runtime_kit import EXECUTORS, Harness, ScriptedAgent, static

pytestmark = pytest.mark.chaos

LOAD_BOUND_S = 20.0


def bounded(fn: Callable[[], Any], bound: float = LOAD_BOUND_S) -> Any:
    """``fn()`` in a daemon thread; raises TimeoutError when it has not returned in ``bound``."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # carried back to the test thread
            out["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(bound)
    if t.is_alive():
        raise TimeoutError(f"still loading after {bound}s")
    if "error" in out:
        raise out["error"]
    return out["value"]


def judge_load(path: Path) -> str:
    """'refused: ...' or 'skipped N' or 'read N events'; raises for anything else."""
    TALLY.add(recordings=1)
    try:
        rec: Recording = bounded(lambda: open_recording(path))
    except ReplayError as exc:
        text = str(exc)
        assert text and "\n" not in text and "Traceback" not in text, text
        TALLY.add(recording_refused=1)
        return f"refused: {text}"
    except BaseException:
        TALLY.add(recording_bad=1)
        raise
    if rec.skipped:
        assert len(rec.errors) == rec.skipped and all("\n" not in e for e in rec.errors)
        TALLY.add(recording_skipped_lines=rec.skipped)
        return f"skipped {rec.skipped}"
    return f"read {len(rec.events)} events"


async def _record(tmp: Path, name: str) -> Path:
    """A real recording (a 40-task run: several SQLite pages), to SQLite and JSONL."""
    from goldfive.sinks.jsonl import JSONLPersistenceSink

    db, jl = tmp / f"{name}.sqlite", tmp / f"{name}.jsonl"
    sinks = [SQLitePersistenceSink(db), JSONLPersistenceSink(jl)]
    h = Harness(ScriptedAgent(), EXECUTORS["sequential"](), static(*(f"t{i}" for i in range(1, 41))), extra={})
    from goldfive.runner import Runner

    h.runner = Runner(agent=h.agent, planner=h.planner, executor=h.executor, sinks=[h.sink, *sinks], control=h.channel)
    h.start()
    await h.finish()
    return db


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("recordings")
    db = asyncio.run(_record(tmp, "real"))
    return db, db.with_suffix(".jsonl")


def _damaged_jsonl(real_jsonl: bytes) -> dict[str, bytes]:
    lines = real_jsonl.split(b"\n")
    return {
        "empty": b"",
        "truncated mid-line": real_jsonl[: len(real_jsonl) // 2],
        "truncated to one byte": real_jsonl[:1],
        "garbage bytes": bytes(range(256)) * 40,
        "NUL bytes": b"\x00" * 4096,
        "NULs inside lines": real_jsonl.replace(b'"', b'\x00"', 20),
        "UTF-16 text": real_jsonl.decode("utf-8").encode("utf-16"),
        "a UTF-8 BOM": b"\xef\xbb\xbf" + real_jsonl,
        "CRLF line ends": real_jsonl.replace(b"\n", b"\r\n"),
        "one line repeated (duplicate sequences)": b"\n".join([lines[0]] * 50) + b"\n",
        "lines shuffled": b"\n".join(reversed([ln for ln in lines if ln])) + b"\n",
        "JSON that is not an event": b'{"hello": "world"}\n[1, 2]\n"str"\n42\nnull\n',
        "huge numbers": b'{"sequence": 1e999999, "run_id": "r"}\n{"sequence": ' + b"9" * 5000 + b"}\n",
        "a 5 MB line": b'{"run_id": "' + b"r" * 5_000_000 + b'"}\n',
        "invalid UTF-8 in a line": real_jsonl[:200] + b"\xff\xfe" + real_jsonl[200:],
        "lone surrogate escapes": b'{"run_id": "\\ud800", "sequence": 0}\n',
    }


DEEP = {"deep arrays": b"[" * 100_000 + b"\n", "deep objects": b'{"a":' * 100_000 + b"\n", "deep in a field": b'{"run_id": "r", "runStarted": ' + b"[" * 100_000 + b"\n"}


def test_damaged_jsonl_recordings_are_refused_or_skipped(real: tuple[Path, Path], tmp_path: Path) -> None:
    results: dict[str, str] = {}
    for name, data in _damaged_jsonl(real[1].read_bytes()).items():
        path = tmp_path / (name.replace(" ", "_") + ".jsonl")
        path.write_bytes(data)
        results[name] = judge_load(path)
    print(*(f"{k}: {v[:100]}" for k, v in results.items()), sep="\n")
    assert results["truncated mid-line"].startswith(("skipped 1", "read"))


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deeply_nested_json_lines_are_skipped_not_a_recursion_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(DEEP[name])
    outcome = judge_load(path)
    assert outcome.startswith(("skipped", "refused")), outcome


def _corrupt(src: Path, dst: Path, offset_frac: float, length: int, fill: bytes) -> None:
    data = bytearray(src.read_bytes())
    start = int(len(data) * offset_frac)
    data[start : start + length] = (fill * length)[:length]
    dst.write_bytes(bytes(data))


def _sqlite_cases(db: Path, tmp: Path, chaos: Chaos) -> dict[str, Path]:
    size = db.stat().st_size
    cases: dict[str, Path] = {}

    def case(name: str) -> Path:
        p = tmp / (name.replace(" ", "_").replace("/", "_") + ".sqlite")
        cases[name] = p
        return p

    case("truncated to the header").write_bytes(db.read_bytes()[:100])
    case("truncated to half").write_bytes(db.read_bytes()[: size // 2])
    case("only the magic").write_bytes(b"SQLite format 3\x00")
    case("magic then garbage").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 64)
    _corrupt(db, case("header page size zeroed"), 16 / size, 2, b"\x00")
    for k in range(chaos.n(30, 400)):  # overwrite bytes in the middle of the file's pages
        frac = chaos.rng.uniform(0.1, 0.95)
        _corrupt(db, case(f"pages overwritten #{k} at {frac:.2f}"), frac, chaos.rng.choice([16, 512, 4096]), bytes([chaos.rng.randrange(256)]))
    return cases


def test_damaged_sqlite_recordings_give_one_clear_error(real: tuple[Path, Path], tmp_path: Path, chaos: Chaos) -> None:
    """Truncations and a broken header: refused with one ReplayError (or read, if intact)."""
    results = {}
    for name, path in _sqlite_cases(real[0], tmp_path, chaos).items():
        if name.startswith("pages overwritten"):
            continue  # see the xfail test below
        results[name] = judge_load(path)
    print(*(f"{k}: {v[:120]}" for k, v in results.items()), sep="\n")


def test_sqlite_recordings_with_corrupted_pages_give_one_clear_error(real: tuple[Path, Path], tmp_path: Path, chaos: Chaos) -> None:
    """Bytes overwritten in the middle of a real recording's pages: 'database disk image is
    malformed', a row that is not an Event, a run_id that is not UTF-8 all become one
    ReplayError (or the damage missed the rows and the run reads)."""
    failures = []
    for name, path in _sqlite_cases(real[0], tmp_path, chaos).items():
        if not name.startswith("pages overwritten"):
            continue
        try:
            judge_load(path)
        except Exception as exc:
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures) + "\n" + chaos.why("tests/chaos/test_chaos_recordings.py")


def test_a_damaged_emitted_at_in_a_two_run_recording_gives_one_clear_error(real: tuple[Path, Path], tmp_path: Path) -> None:
    db = tmp_path / "two.sqlite"
    shutil.copy(real[0], db)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO events SELECT 'other', sequence, event_id || 'x', kind, emitted_at_ms, payload FROM events")
        conn.execute("UPDATE events SET emitted_at_ms = 'garbled' WHERE run_id = 'other' AND sequence = 0")
    conn.close()
    assert judge_load(db).startswith(("refused", "read"))


def test_a_directory_a_fifo_and_a_missing_file_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    fifo_sqlite = tmp_path / "fifo.sqlite"
    os.mkfifo(fifo_sqlite)
    (tmp_path / "dir.sqlite").mkdir()
    link = tmp_path / "dangling.jsonl"
    link.symlink_to(tmp_path / "nowhere")
    for path in (fifo, fifo_sqlite, tmp_path / "dir.sqlite", tmp_path / "missing.jsonl", link):
        outcome = judge_load(path)  # a loader that opened the FIFO for reading would block here
        assert outcome.startswith("refused"), (path, outcome)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_refused(real: tuple[Path, Path], tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite"
    shutil.copy(real[0], path)
    path.chmod(0)
    assert judge_load(path).startswith("refused")


def test_goldfive_replay_prints_one_line_for_a_damaged_recording(tmp_path: Path) -> None:
    """The command itself: exit 2 and one line on stderr, no traceback."""
    from goldfive.cli import main

    cases = {"garbage.jsonl": bytes(range(256)) * 8, "nul.jsonl": b"\x00" * 100, "half.sqlite": b"SQLite format 3\x00" + b"\x00" * 300}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        result = CliRunner().invoke(main, ["replay", str(tmp_path / name)])
        assert result.exit_code == 2, (name, result.output)
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
