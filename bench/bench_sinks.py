"""Throughput of the event sinks, against building the same events with no sink.

Run: python bench/bench_sinks.py [N]

Events come from the real factories (a mix of task_started / task_progress / task_completed /
drift_detected). For each sink two figures are printed, best of ROUNDS runs:
  emit ev/s        emitting pre-built events, including close() (the final flush/commit)
  build+emit ev/s  building each event with the factory and emitting it, including close()
and the ratios of each to the build-only baseline measured in the same run.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

from goldfive import events
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks import InMemorySink, JSONLPersistenceSink, SQLitePersistenceSink
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session

ROUNDS = 3
TARGETS = {"InMemorySink": 200_000, "JSONLPersistenceSink": 50_000, "SQLitePersistenceSink": 50_000}


def build(n: int, run_id: str) -> list[Event]:
    s = Session(run_id=run_id)
    drift = DriftEvent(DriftKind.USER_STEER, DriftSeverity.WARNING, "focus on fewer slides")
    out: list[Event] = []
    for i in range(n):
        task = f"task_{i // 5}"
        r = i % 5
        if r == 0:
            out.append(events.task_started(s, task, "writer"))
        elif r == 4:
            out.append(events.task_completed(s, task, "drafted 6 slides about Python"))
        elif i % 97 == 0:
            out.append(events.drift_detected(s, drift))
        else:
            out.append(events.task_progress(s, task, detail=f"step {r} of 3", fraction=r / 4))
    return out


SinkFactory = Callable[[int], tuple[object, Callable[[], Awaitable[None]]]]


async def timed(sink_factory: SinkFactory, n: int, prebuilt: bool) -> float:
    """Seconds to emit n events into a fresh sink and close it."""
    best = float("inf")
    for rnd in range(ROUNDS):
        evs = build(n, f"pre{rnd}") if prebuilt else None
        sink, after = sink_factory(rnd)
        t0 = time.perf_counter()
        if evs is not None:
            for ev in evs:
                await sink.emit(ev)  # type: ignore[attr-defined]
        else:
            s = Session(run_id=f"live{rnd}")
            for i in range(n):
                ev = events.task_progress(s, f"task_{i // 5}", detail=f"step {i % 5} of 3", fraction=0.5)
                await sink.emit(ev)  # type: ignore[attr-defined]
        await sink.close()  # type: ignore[attr-defined]
        await after()
        best = min(best, time.perf_counter() - t0)
    return best


async def main(n: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="goldfive-bench-"))

    async def nothing() -> None:
        return None

    def memory(_: int) -> tuple[object, Callable[[], Awaitable[None]]]:
        return InMemorySink(), nothing

    def memory_sub(_: int) -> tuple[object, Callable[[], Awaitable[None]]]:
        sink = InMemorySink()
        sub = sink.subscribe(maxsize=n + 1)
        got: list[object] = []

        async def drain() -> None:  # the subscriber reads everything; counted in the time
            async for item in sub:
                got.append(item)
            assert len(got) == n, len(got)

        return sink, drain

    def jsonl(rnd: int) -> tuple[object, Callable[[], Awaitable[None]]]:
        return JSONLPersistenceSink(tmp / f"run{rnd}-{time.monotonic_ns()}.jsonl", mode="write"), nothing

    def sqlite(rnd: int) -> tuple[object, Callable[[], Awaitable[None]]]:
        return SQLitePersistenceSink(tmp / f"run{rnd}-{time.monotonic_ns()}.db"), nothing

    base = float("inf")
    for rnd in range(ROUNDS):
        t0 = time.perf_counter()
        build(n, f"b{rnd}")
        base = min(base, time.perf_counter() - t0)
    base_rate = n / base

    rows = []
    for label, name, factory in [
        ("InMemorySink (no subscriber)", "InMemorySink", memory),
        ("InMemorySink (1 subscriber)", "InMemorySink", memory_sub),
        ("JSONLPersistenceSink", "JSONLPersistenceSink", jsonl),
        ("SQLitePersistenceSink (file)", "SQLitePersistenceSink", sqlite),
    ]:
        emit_rate = n / await timed(factory, n, prebuilt=True)
        both_rate = n / await timed(factory, n, prebuilt=False)
        rows.append((label, emit_rate, both_rate, TARGETS[name]))

    print(f"goldfive sinks benchmark: {n} events, best of {ROUNDS}, Python {sys.version.split()[0]}")
    print(f"{'':31}{'emit ev/s':>12}{'x build':>9}{'build+emit':>12}{'x build':>9}{'target':>10}  ok")
    print(f"{'build only (baseline)':31}{'':>12}{'':>9}{base_rate:>12,.0f}{1.0:>9.2f}")
    for label, emit_rate, both_rate, target in rows:
        ok = "yes" if emit_rate >= target else "NO"
        print(
            f"{label:31}{emit_rate:>12,.0f}{emit_rate / base_rate:>9.2f}"
            f"{both_rate:>12,.0f}{both_rate / base_rate:>9.2f}{target:>10,}  {ok}"
        )
    print("emit ev/s includes close() (final flush/commit); 'x build' = rate / build-only rate.")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000))
