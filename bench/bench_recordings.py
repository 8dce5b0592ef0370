"""Big recordings: replay open, serve start and ``ctl tail``: ``python bench/bench_recordings.py``.

Builds two recordings in a temp dir, a 1,000,000-event run over 20,000 tasks and a
150,000-event run over 50,000 tasks (each: a plan, then per task started / progress reports /
completed, and two plan revisions). The SQLite file is written by the fast path: events built
as protobufs and inserted with one ``executemany`` of serialized rows (the sink's own path
would take minutes on two cores); the JSONL file with the sink's own JSON encoder.

Every figure is measured in a fresh subprocess (time, and peak RSS from ``ru_maxrss``), a
warm-up then the median of ``--passes`` passes, and printed against a baseline measured in the
same run: a bare ``SELECT payload`` of the run's rows (SQLite), or reading the file's lines
(JSONL). Nothing passes or fails.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = {"1M-20k": (1_000_000, 20_000), "150k-50k": (150_000, 50_000)}


def make_run(run_id: str, total: int, tasks: int, revisions: int = 2) -> Iterator[object]:
    from goldfive.pb.goldfive.v1 import events_pb2 as pb
    from goldfive.pb.goldfive.v1 import types_pb2 as tpb

    t0 = 1_700_000_000_000
    seq = 0

    def ev(**kw: object) -> pb.Event:
        nonlocal seq
        e = pb.Event(event_id=f"{run_id}-{seq}", run_id=run_id, sequence=seq, **kw)  # type: ignore[arg-type]
        e.emitted_at.FromMilliseconds(t0 + seq * 5)
        seq += 1
        return e

    plan = tpb.Plan(id="p", run_id=run_id, summary="big", tasks=[tpb.Task(id=f"t{i}", title=f"task {i}") for i in range(tasks)])
    yield ev(run_started=pb.RunStarted(goal_summary="a long run"))
    yield ev(plan_submitted=pb.PlanSubmitted(plan=plan))
    body = total - 3
    per = max(body // tasks, 3)
    rev_every = body // (revisions + 1)
    i = 0
    while seq < total - 1:
        task, k = f"t{(i // per) % tasks}", i % per
        if i and i % rev_every == 0:
            plan.revision_index += 1
            yield ev(plan_revised=pb.PlanRevised(plan=plan))
        elif k == 0:
            yield ev(task_started=pb.TaskStarted(task_id=task))
        elif k == per - 1:
            yield ev(task_completed=pb.TaskCompleted(task_id=task, result_summary="ok"))
        else:
            yield ev(task_progress=pb.TaskProgress(task_id=task, fraction=k / per, detail=f"step {k} of {per}"))
        i += 1
    yield ev(run_completed=pb.RunCompleted(outcome_summary="done"))


def build(d: Path, name: str, total: int, tasks: int) -> tuple[Path, Path]:
    from goldfive.sinks import SQLitePersistenceSink
    from goldfive.sinks._json import message_to_json

    db, jl = d / f"{name}.sqlite", d / f"{name}.jsonl"
    SQLitePersistenceSink(db)._conn.close()  # the sink's own schema
    conn = sqlite3.connect(db)
    rows = []
    with open(jl, "w", encoding="utf-8") as f:
        for e in make_run(name, total, tasks):
            ts = e.emitted_at  # type: ignore[attr-defined]
            rows.append((e.run_id, e.sequence, e.event_id, e.WhichOneof("payload"), ts.seconds * 1000 + ts.nanos // 10**6, e.SerializeToString()))  # type: ignore[attr-defined]
            f.write(message_to_json(e) + "\n")  # type: ignore[arg-type]
            if len(rows) == 50_000:
                conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", rows)
                rows.clear()
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return db, jl


# -- what one subprocess measures -------------------------------------------------------------


def measure(what: str, path: str, extra: str) -> float:
    if what == "select":
        conn = sqlite3.connect(path)
        n = sum(1 for _ in conn.execute("SELECT payload FROM events ORDER BY run_id, sequence"))
        return float(n)
    if what == "lines":
        with open(path, "rb") as f:
            return float(sum(1 for _ in f))
    if what == "replay":
        from goldfive.recording import open_recording
        from goldfive_tui.replay import Replay

        replay = Replay(open_recording(path))  # opens: the first screen's state
        return float(replay.total)
    if what == "replay-indexed":
        from goldfive.recording import open_recording
        from goldfive_tui.replay import Replay

        replay = Replay(open_recording(path))
        replay.timeline.index()  # what the screen does in the background, a step at a time
        replay.timeline.state_at(replay.timeline.indexed)  # the final state, where it then shows
        return float(replay.timeline.indexed)
    if what == "serve":
        from goldfive.remote.host import RunHost

        return float(RunHost(path).load_recorded())
    if what == "tail":
        import asyncio

        from goldfive.link.client import RemoteClient

        async def count() -> int:
            async with RemoteClient(extra) as client:
                (run,) = await client.list_runs()
                return sum([1 async for _ in client.subscribe(run.run_id)])

        return float(asyncio.run(count()))
    raise SystemExit(f"unknown measurement {what!r}")


def child(what: str, path: Path | str, extra: str = "") -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", what, str(path), extra], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def timed(what: str, path: Path | str, passes: int, extra: str = "") -> dict[str, float]:
    child(what, path, extra)  # warm-up: page cache, imports
    runs = [child(what, path, extra) for _ in range(passes)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def line(label: str, fig: dict[str, float], base: dict[str, float], *, rate: bool = False) -> str:
    if rate:
        r, b = fig["n"] / fig["s"], base["n"] / base["s"]
        return f"  {label:<34} {r:>10,.0f} events/s  (the bare SELECT reads x{b / r:,.0f} faster: {b:,.0f}/s)"
    return (f"  {label:<34} {fig['s']:7.2f} s  x{fig['s'] / base['s']:5.1f}   peak {fig['mb']:6.0f} MB  "
            f"x{fig['mb'] / base['mb']:4.1f}   (baseline {base['s']:.2f} s, {base['mb']:.0f} MB)")  # fmt: skip


def serve_tail(db: Path, passes: int) -> tuple[dict[str, float], dict[str, float]]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    addr = f"127.0.0.1:{port}"
    env = dict(os.environ, GOLDFIVE_DATA_DIR=str(db.parent))
    proc = subprocess.Popen([sys.executable, "-m", "goldfive.cli", "serve", "--listen", addr, "--db", str(db)],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=ROOT, env=env)  # fmt: skip
    try:
        assert proc.stderr is not None and "listening" in proc.stderr.readline()
        sub = timed("tail", db, passes, addr)
        t = time.perf_counter()
        rid = db.stem
        subprocess.run([sys.executable, "-m", "goldfive.cli", "ctl", addr, "tail", rid], stdout=subprocess.DEVNULL, check=True, cwd=ROOT)
        ctl = {"s": time.perf_counter() - t, "n": sub["n"]}
    finally:
        proc.terminate()
        proc.wait(30)
    return sub, ctl


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--child", nargs=3)
    ap.add_argument("--only", choices=sorted(SHAPES))
    args = ap.parse_args()
    if args.child:
        what, path, extra = args.child
        t = time.perf_counter()
        n = measure(what, path, extra)
        s = time.perf_counter() - t
        print(json.dumps({"s": s, "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "n": n}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, (total, tasks) in SHAPES.items():
            if args.only and name != args.only:
                continue
            t = time.perf_counter()
            db, jl = build(d, name, total, tasks)
            print(f"{name}: {total:,} events over {tasks:,} tasks, built in {time.perf_counter() - t:.0f} s "
                  f"(SQLite {db.stat().st_size / 2**20:.0f} MiB by direct inserts, JSONL {jl.stat().st_size / 2**20:.0f} MiB); "
                  f"median of {args.passes} after a warm-up")  # fmt: skip
            select = timed("select", db, args.passes)
            lines = timed("lines", jl, args.passes)
            print(line("replay open (first screen), SQLite", timed("replay", db, args.passes), select))
            print(line("replay fully indexed (at the end), SQLite", timed("replay-indexed", db, args.passes), select))
            print(line("replay open, JSONL", timed("replay", jl, args.passes), lines))
            print(line("serve start (load recorded runs)", timed("serve", db, args.passes), select))
            sub, ctl = serve_tail(db, args.passes)
            print(line("tail via Subscribe (client count)", sub, select, rate=True))
            print(line("goldfive ctl tail > /dev/null", ctl, select, rate=True) + f"  {ctl['s']:.1f} s")


if __name__ == "__main__":
    main()
