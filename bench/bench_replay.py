"""Opening a 100,000-event recording in replay: ``python bench/bench_replay.py``.

For a JSONL and a SQLite recording written from the real event factories, times each stage of
``goldfive replay FILE``: reading the file (open_recording: replay_from_jsonl, or list_runs +
replay_from_sqlite), building the initial state (Replay: Timeline checkpoints + state at the
end) and the first paint (App.run_test at 120x40). The baseline is the same pipeline on a
1,000-event recording, so the ratio shows how opening scales. Also: a cursor move that rebuilds
from a checkpoint (random jumps) against one step forward. Target (issue 5): open <= 3 s.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from google.protobuf import json_format  # noqa: E402

from goldfive import events as E  # noqa: E402
from goldfive.pb.goldfive.v1.events_pb2 import Event  # noqa: E402
from goldfive.recording import open_recording  # noqa: E402
from goldfive.sinks import SQLitePersistenceSink  # noqa: E402
from goldfive.sinks._json import message_to_json  # noqa: E402
from goldfive.sinks._json_decode import parse_dict  # noqa: E402
from goldfive.types import DriftEvent, DriftKind, DriftSeverity  # noqa: E402
from goldfive_tui.app import GoldfiveApp  # noqa: E402
from goldfive_tui.replay import Replay  # noqa: E402
from goldfive_tui.run import replay_screen  # noqa: E402
from tests.tui.scenario import DemoScript  # noqa: E402

BIG = 100_000
SMALL = 1_000
TARGET_S = 3.0
REPEATS = 3


def make_events(total: int) -> list[Event]:
    """The demo story's opening, then a long middle of progress reports with a drift now and
    then, then RunCompleted: the shape of a long, chatty run."""
    script = DemoScript()
    out = list(script.opening())
    n = 0
    while len(out) < total - 1:
        script.clock.advance(7)
        if n % 200 == 199:
            drift = DriftEvent(DriftKind.CONTEXT_PRESSURE, DriftSeverity.INFO, f"context {n % 90}% full", task_id="draft")
            out.append(E.drift_detected(script.session, drift))
        else:
            out.append(E.task_progress(script.session, "draft", detail=f"slide {n % 8 + 1} of 8, pass {n}", fraction=(n % 100) / 100))
        n += 1
    out.append(E.run_completed(script.session, "deck published"))
    return out


def write_jsonl(events: list[Event], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for ev in events:
            f.write(message_to_json(ev) + "\n")


async def write_sqlite(events: list[Event], path: Path) -> None:
    sink = SQLitePersistenceSink(path)
    for ev in events:
        await sink.emit(ev)
    await sink.close()


async def open_and_paint(path: Path) -> dict[str, float]:
    gc.collect()  # start each open from the same heap, not with the last one's garbage
    t0 = time.perf_counter()
    recording = open_recording(path)
    t1 = time.perf_counter()
    screen = replay_screen(recording)
    app = GoldfiveApp(screen, cursor_blink=False)
    t2 = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen.repaint()
        await pilot.pause()
        t3 = time.perf_counter()
        assert screen.replay is not None and screen.replay.cursor == len(recording.events)
    return {"read": t1 - t0, "state": t2 - t1, "paint": t3 - t2, "total": t3 - t0, "events": len(recording.events)}


def decode_per_event(path: Path, lines: int = 5000) -> tuple[float, float]:
    objs = [json.loads(line) for line in path.read_bytes().split(b"\n")[:lines]]
    t = time.perf_counter()
    for obj in objs:
        parse_dict(obj, Event)
    fast = (time.perf_counter() - t) / len(objs)
    t = time.perf_counter()
    for obj in objs:
        json_format.ParseDict(obj, Event(), ignore_unknown_fields=True)
    ref = (time.perf_counter() - t) / len(objs)
    return fast * 1e6, ref * 1e6


def cursor_moves(path: Path) -> tuple[list[float], list[float]]:
    replay = Replay(open_recording(path))
    replay.timeline.index()  # a long recording opens before it is indexed; the bar indexes the rest
    rng = random.Random(5)
    jumps, steps = [], []
    for _ in range(200):
        n = rng.randrange(replay.total)
        t = time.perf_counter()
        replay.state = replay.timeline.state_at(n)
        jumps.append(time.perf_counter() - t)
        replay.cursor = n
        if n < replay.total:
            t = time.perf_counter()
            replay.state.apply(replay.timeline.events[n])
            steps.append(time.perf_counter() - t)
    return jumps, steps


def row(label: str, figures: dict[str, float], base: dict[str, float] | None) -> str:
    ratio = f"x{figures['total'] / base['total']:.0f} of baseline" if base else "baseline"
    return (
        f"  {label:<26} read {figures['read']:6.3f}s  state {figures['state']:6.3f}s  "
        f"paint {figures['paint']:6.3f}s  total {figures['total']:6.3f}s  ({ratio})"
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        files: dict[str, Path] = {}
        for size in (SMALL, BIG):
            events = make_events(size)
            files[f"jsonl{size}"] = d / f"run{size}.jsonl"
            files[f"sqlite{size}"] = d / f"run{size}.sqlite"
            write_jsonl(events, files[f"jsonl{size}"])
            await write_sqlite(events, files[f"sqlite{size}"])
        print(f"open a recording in replay (read + initial state + first paint at 120x40); target <= {TARGET_S:.0f} s")
        print(f"  best of {REPEATS} (the machine is shared, so the median is shown too)")
        worst = 0.0
        for fmt in ("jsonl", "sqlite"):
            base = min([await open_and_paint(files[f"{fmt}{SMALL}"]) for _ in range(REPEATS)], key=lambda f: f["total"])
            runs = [await open_and_paint(files[f"{fmt}{BIG}"]) for _ in range(REPEATS)]
            big = min(runs, key=lambda f: f["total"])
            median = statistics.median(f["total"] for f in runs)
            mib = files[f"{fmt}{BIG}"].stat().st_size / 2**20
            print(row(f"{fmt} {SMALL:,} events", base, None))
            print(row(f"{fmt} {int(big['events']):,} events ({mib:.0f} MiB)", big, base) + f"  median {median:.2f}s")
            worst = max(worst, big["total"])
        verdict = "met" if worst <= TARGET_S else "MISSED"
        print(f"  slowest 100k open (best of {REPEATS}): {worst:.2f} s -> target {verdict}")
        fast_us, ref_us = decode_per_event(files[f"jsonl{BIG}"])
        print(f"JSONL decode per event: fast decoder {fast_us:.1f} us vs json_format.ParseDict {ref_us:.1f} us (x{ref_us / fast_us:.1f})")
        jumps, steps = cursor_moves(files[f"sqlite{BIG}"])
        jumps_ms = sorted(j * 1000 for j in jumps)
        p50, p99 = statistics.median(jumps_ms), jumps_ms[int(len(jumps_ms) * 0.99) - 1]
        step_us = statistics.median(steps) * 1e6
        print("cursor moves on 100k events (checkpoint every 1,000)")
        print(f"  random jump (rebuild from checkpoint): p50 {p50:.2f} ms  p99 {p99:.2f} ms")
        print(f"  one step forward (apply one event):    p50 {step_us:.1f} us  (jump p50 = x{p50 * 1000 / step_us:.0f})")


if __name__ == "__main__":
    asyncio.run(main())
