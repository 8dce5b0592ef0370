"""kill -9 at seeded random moments: ``goldfive run ... --headless`` and ``goldfive serve demo``
as subprocesses recording to a SQLite file under a temporary GOLDFIVE_DATA_DIR. After each
kill the recording passes ``PRAGMA integrity_check``, every recorded run's sequences are
gap-free from 0 (for what was written), and the next start works.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
from tests.chaos.conftest import Chaos
from tests.chaos.tally import TALLY

pytestmark = pytest.mark.chaos

ROOT = Path(__file__).resolve().parents[2]
RUN = [sys.executable, "-m", "goldfive.cli", "run", "examples.hello_agent:agent", "--goal", "g", "--plan", "examples/hello_plan.json", "--headless"]
BOUND_S = 60.0


def _env(data_dir: Path) -> dict[str, str]:
    env = dict(os.environ, GOLDFIVE_DATA_DIR=str(data_dir), PYTHONPATH=str(ROOT))
    env.pop("NO_COLOR", None)
    return env


def _db(data_dir: Path) -> Path:
    return data_dir / "runs.sqlite"


def check_recording(db: Path) -> tuple[int, int]:
    """(runs, events) after integrity_check and the gap check; raises AssertionError."""
    if not db.exists():
        return 0, 0  # killed before the first event was written
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").fetchone() is None:
            return 0, 0  # killed after the file was created, before its table was
        runs = conn.execute("SELECT DISTINCT run_id FROM events").fetchall()
        total = 0
        for (run_id,) in runs:
            seqs = [s for (s,) in conn.execute("SELECT sequence FROM events WHERE run_id = ? ORDER BY sequence", (run_id,))]
            assert seqs == list(range(len(seqs))), (run_id, seqs)
            total += len(seqs)
        return len(runs), total
    finally:
        conn.close()


def _kill_run(data_dir: Path, at_s: float) -> None:
    proc = subprocess.Popen(RUN, cwd=ROOT, env=_env(data_dir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        try:
            proc.wait(at_s)  # it may end by itself before the moment comes
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(BOUND_S)


def _start_serve(data_dir: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "goldfive.cli", "serve", *args, "--listen", "127.0.0.1:0", "--db", str(_db(data_dir))],
        cwd=ROOT,
        env=_env(data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()  # "goldfive serve: listening on 127.0.0.1:PORT (...)"
    if "listening on " not in line:
        proc.kill()
        proc.wait(BOUND_S)
        raise AssertionError(f"serve did not start: {line!r} {proc.stderr.read()[:500]!r}")
    return proc, line.split("listening on ", 1)[1].split()[0]


def _list_runs(addr: str) -> list[service_pb2.RunSummary]:
    with grpc.insecure_channel(addr) as channel:
        return list(service_pb2_grpc.RunsStub(channel).ListRuns(service_pb2.ListRunsRequest(), timeout=20).runs)


def _kill_serve(data_dir: Path, at_s: float) -> None:
    proc, addr = _start_serve(data_dir, "demo", "--speed", "5")
    try:
        try:
            proc.wait(at_s)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(BOUND_S)
        if proc.stderr is not None:
            proc.stderr.close()


def test_sigkill_at_random_moments_leaves_a_sound_recording_and_the_next_start_works(tmp_path: Path, chaos: Chaos, request: pytest.FixtureRequest) -> None:
    started = time.monotonic()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    kills = chaos.n(3, 30)
    deadline = chaos.deadline(60, 180)
    moments: list[str] = []
    for k in range(kills):
        if time.monotonic() > deadline:
            break
        at = round(chaos.rng.uniform(0.2, 3.5), 3)
        which = "serve" if k % 3 == 2 else "run"
        moments.append(f"{which}@{at}s")
        (_kill_serve if which == "serve" else _kill_run)(data_dir, at)
        TALLY.add(kills=1, **{f"kill_{which}": 1})
        try:
            runs, evs = check_recording(_db(data_dir))
        except AssertionError as exc:
            raise AssertionError(f"after kills {moments}: {exc} {chaos.why(request.node.nodeid)}") from exc
        TALLY.add(kill_integrity_ok=1)
    # The next start works: a run to the end, then a server that serves every recorded run.
    done = subprocess.run(RUN, cwd=ROOT, env=_env(data_dir), capture_output=True, text=True, timeout=BOUND_S)
    assert done.returncode == 0, (moments, done.stderr[-2000:])
    runs, evs = check_recording(_db(data_dir))
    proc, addr = _start_serve(data_dir)
    try:
        served = _list_runs(addr)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(BOUND_S) == 0
        if proc.stderr is not None:
            proc.stderr.close()
    assert len(served) == runs, (moments, [s.run_id for s in served])
    assert any(s.state == "COMPLETED" for s in served)
    TALLY.add(kill_restart_ok=1, kill_runs_checked=runs, kill_events=evs)
    TALLY.time("kill -9", started)
    print(json.dumps({"kills": moments, "runs": runs, "events": evs, "states": sorted(s.state for s in served)}))
