"""A pushed run's events through the hub's ingest, in process: ``python bench/bench_ingest_path.py
[--events 50000] [--passes 3] [--profile]``.

What ``goldfive serve --ingest`` does with each event a producer pushes (HostIngest: the run's
state folded, its live tail kept, its recording written by the hub's RunRecorder, a
RecordingSink over SqliteLog, durable "normal"), without the transport, so the figures are the
hub's own per-event cost. Rates are events per CPU second of this process (the machine may be
shared; wall time beside). The baseline is the fold alone (``RunState.apply``, which every view
of a run does); against it the recording alone and the whole ingest. A warm-up, then the
median of ``--passes`` passes, each on a new run in a new database.

``--profile`` runs the whole ingest once under cProfile and prints the Python calls per event
and the functions with the most own time: per-event calls are what this path spends.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_hub_ingest import events  # noqa: E402  (the same events as the hub ingest bench)

Pass = Callable[[list[Any], str], Awaitable[None]]


async def fold(evs: list[Any], db: str) -> None:
    from goldfive.view import RunState

    state = RunState()
    for ev in evs:
        state.apply(ev)


async def record(evs: list[Any], db: str) -> None:
    from goldfive.store.recorder import RunRecorder

    recorder = RunRecorder(db)
    for ev in evs:
        await recorder.emit(ev)
    await recorder.close()


async def ingest(evs: list[Any], db: str) -> None:
    from goldfive.remote.host import RunHost
    from goldfive.remote.ingest import HostIngest

    host = RunHost(db)
    sink = HostIngest(host)
    for ev in evs:
        await sink.emit(ev)
    await host.close()


def one(fn: Pass, n: int, tmp: Path, k: int, profile: cProfile.Profile | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of ``fn`` over a new run of ``n`` events in a new database."""
    evs = list(events(f"run-{k}", n))
    db = str(tmp / f"ingest-{k}.sqlite")

    async def timed() -> tuple[float, float]:
        w, c = time.perf_counter(), time.process_time()
        if profile is not None:
            profile.enable()
        await fn(evs, db)
        if profile is not None:
            profile.disable()
        return time.perf_counter() - w, time.process_time() - c

    return asyncio.run(timed())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="profile the whole ingest once instead")
    args = ap.parse_args()
    n = args.events
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.profile:
            prof = cProfile.Profile()
            one(ingest, 1000, tmp, -1)  # warm-up (imports, first open)
            one(ingest, n, tmp, 0, prof)
            stats = pstats.Stats(prof)
            calls = sum(nc for _cc, nc, _tt, _ct, _callers in stats.stats.values())  # type: ignore[attr-defined]
            print(f"the whole ingest of {n:,} events: {calls:,} Python calls, {calls / n:.1f} per event")
            stats.sort_stats("tottime").print_stats(20)
            return
        print(f"{n:,} events per pass; median of {args.passes} passes after a warm-up; {os.cpu_count()} CPUs")
        rows = [
            ("the fold alone (RunState.apply)", fold),
            ("the recording alone (RunRecorder, SQLite)", record),
            ("the whole ingest (HostIngest: fold, live tail, recording)", ingest),
        ]
        k = iter(range(10**6))
        base = None
        for label, fn in rows:
            one(fn, min(n, 5000), tmp, next(k))  # warm-up
            runs = [one(fn, n, tmp, next(k)) for _ in range(args.passes)]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            rate = n / cpu
            ratio = "(baseline)" if base is None else f"x{rate / base:5.2f} the baseline"
            base = base or rate
            print(f"  {label:<58} {rate:>9,.0f} events/CPU s  {ratio:<20} wall {n / wall:>9,.0f} events/s")


if __name__ == "__main__":
    main()
