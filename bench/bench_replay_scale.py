"""Replay and hub start at scale (issue 27 part 3): ``python bench/bench_replay_scale.py``.

1. ``goldfive replay`` of a 1,000,000-event JSONL recording: seconds from ``open_recording`` to
   the first screen (the app mounted at 120x40, the replay bar and log lines drawn) and the
   process's peak RSS. Target: at most 2 s and 300 MB. ``--whole`` also times the old way
   (the file read and decoded whole) for comparison: minutes and gigabytes, so not by default.
2. A hub's start on a large SQLite store (``--hub-runs`` runs of ``--hub-events`` events): the
   integrity check ``serve`` runs first (``PRAGMA quick_check``) and ``RunHost.load_recorded``
   (runs listed, each one's summary folded from its summary events), with peak RSS; then
   ``serve`` itself: seconds from the call to listening, to the first run listed by ListRuns and
   to every run listed (a hub lists the runs of a large file as it reads them, while answering).

Each figure is measured in a fresh process (peak RSS is per process). The recordings are
generated once into ``--dir`` (default /tmp/goldfive-bench-scale) and reused: writing a million
events takes a minute or two, ten million a quarter of an hour.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPLAY_EVENTS = 1_000_000
TARGET_S, TARGET_MB = 2.0, 300


def write_jsonl(path: Path, total: int) -> None:
    """The demo story's opening, then progress reports with a drift now and then, then the end
    (bench_replay.py's shape), written as it is made."""
    from goldfive import events as E
    from goldfive.sinks.jsonl import encode_line
    from goldfive.types import DriftEvent, DriftKind, DriftSeverity
    from tests.tui.scenario import DemoScript

    script = DemoScript()
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as f:
        opening = list(script.opening())
        for ev in opening:
            f.write(encode_line(ev) + "\n")
        for i in range(total - len(opening) - 1):
            script.clock.advance(7)
            if i % 200 == 199:
                drift = DriftEvent(DriftKind.CONTEXT_PRESSURE, DriftSeverity.INFO, f"context {i % 90}% full", task_id="draft")
                ev = E.drift_detected(script.session, drift)
            else:
                ev = E.task_progress(script.session, "draft", detail=f"slide {i % 8 + 1} of 8, pass {i}", fraction=(i % 100) / 100)
            f.write(encode_line(ev) + "\n")
        f.write(encode_line(E.run_completed(script.session, "deck published")) + "\n")
    tmp.rename(path)


async def write_hub_db(path: Path, runs: int, per_run: int) -> None:
    from goldfive import events as E
    from goldfive.sinks import SQLitePersistenceSink
    from goldfive.types import Session

    tmp = path.with_suffix(".part")
    tmp.unlink(missing_ok=True)
    sink = SQLitePersistenceSink(tmp, batch_size=50_000, flush_interval=60)
    for r in range(runs):
        rid = f"{r:08x}-hubrun"
        clock = iter(range(1_700_000_000_000 + r * 10_000, 10**15, 7))
        s = Session(run_id=rid, clock=lambda: next(clock))
        evs = [E.run_started(s, goal_summary=f"goal {r}")]
        evs += [E.task_progress(s, "t1", detail=f"step {i}", fraction=(i % 100) / 100) for i in range(per_run - 2)]
        evs.append(E.run_completed(s, "done"))
        await sink.emit_many(evs)
        if r % 50 == 49:
            await sink.flush()
    await sink.close()
    tmp.rename(path)


# -- measured in a child process ------------------------------------------------------------


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _first_screen(path: str, whole: bool) -> dict[str, float]:
    import goldfive.recording as recording
    from goldfive.recording import open_recording
    from goldfive_tui.app import GoldfiveApp
    from goldfive_tui.replay import ReplayBar
    from goldfive_tui.run import replay_screen

    if whole:
        recording.STREAM_BYTES = 1 << 62
    t0 = time.perf_counter()
    rec = open_recording(path)
    t1 = time.perf_counter()
    screen = replay_screen(rec)
    app = GoldfiveApp(screen, cursor_blink=False)
    async with app.run_test(size=(120, 40)):
        t2 = time.perf_counter()
        bar = app.screen.query_one(ReplayBar).status_text()
        assert f"/{len(rec.events)}" in bar, bar
        assert "slide" in app.export_screenshot()  # log lines drawn
        app.exit()
    return {"events": len(rec.events), "open": t1 - t0, "first_screen": t2 - t0, "peak_mb": _peak_mb()}


def _hub_start(path: str) -> dict[str, float]:
    from goldfive.remote.host import RunHost
    from goldfive.store.history import check_database

    t0 = time.perf_counter()
    problem = check_database(path)
    t1 = time.perf_counter()
    host = RunHost(path)
    runs = host.load_recorded()
    t2 = time.perf_counter()
    events = sum(r.state.events for r in host.runs())
    return {"problem": problem or "", "check": t1 - t0, "load": t2 - t1, "runs": runs, "events": events, "peak_mb": _peak_mb()}


async def _serve_start(path: str, expect: int) -> dict[str, float]:
    from goldfive.link.client import RemoteClient
    from goldfive.remote.server import serve

    loop = asyncio.get_running_loop()
    ready: asyncio.Future[Any] = loop.create_future()
    t0 = time.perf_counter()
    task = loop.create_task(serve("127.0.0.1:0", db_path=path, ready=ready))
    server = await ready
    listening = time.perf_counter() - t0
    first = 0.0
    async with RemoteClient(server.address) as client:
        while True:
            runs = await client.list_runs(timeout=600)
            if runs and not first:
                first = time.perf_counter() - t0
            if len(runs) >= expect:
                break
            await asyncio.sleep(0.05)
    listed = time.perf_counter() - t0
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return {"listening": listening, "first": first, "all": listed, "runs": len(runs), "peak_mb": _peak_mb()}


def child(argv: list[str]) -> None:
    kind, path = argv[0], argv[1]
    if kind == "replay":
        out = asyncio.run(_first_screen(path, whole=False))
    elif kind == "replay-whole":
        out = asyncio.run(_first_screen(path, whole=True))
    elif kind == "serve":
        out = asyncio.run(_serve_start(path, int(argv[2])))
    else:
        out = _hub_start(path)
    print(json.dumps(out))


def measure(kind: str, path: Path, *extra: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child", kind, str(path), *extra], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/goldfive-bench-scale")
    ap.add_argument("--events", type=int, default=REPLAY_EVENTS)
    ap.add_argument("--hub-runs", type=int, default=200)
    ap.add_argument("--hub-events", type=int, default=5_000, help="events per run")
    ap.add_argument("--whole", action="store_true", help="also time reading the JSONL file whole (slow)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--hub-only", action="store_true", help="only the hub's start (no JSONL replay)")
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    jsonl = d / f"replay-{args.events}.jsonl"
    if not jsonl.exists() and not args.hub_only:
        t = time.perf_counter()
        write_jsonl(jsonl, args.events)
        print(f"wrote {jsonl} in {time.perf_counter() - t:.0f} s")
    hub = d / f"hub-{args.hub_runs}x{args.hub_events}.sqlite"
    if not hub.exists():
        t = time.perf_counter()
        asyncio.run(write_hub_db(hub, args.hub_runs, args.hub_events))
        print(f"wrote {hub} in {time.perf_counter() - t:.0f} s")

    if not args.hub_only:
        replay(jsonl, args)
    mib = hub.stat().st_size / 2**20
    print(f"hub start on {hub.name} ({mib:.0f} MiB)")
    hub_start(hub, args)


def replay(jsonl: Path, args: argparse.Namespace) -> None:
    mib = jsonl.stat().st_size / 2**20
    print(f"replay of a JSONL recording, {args.events:,} events ({mib:.0f} MiB); target first screen <= {TARGET_S:g} s, <= {TARGET_MB} MB")
    runs = [measure("replay", jsonl) for _ in range(args.repeats)]
    best = min(runs, key=lambda r: r["first_screen"])
    for r in runs:
        print(f"  streamed: scan {r['open']:.2f} s, first screen {r['first_screen']:.2f} s, peak RSS {r['peak_mb']:.0f} MiB")
    met = best["first_screen"] <= TARGET_S and max(r["peak_mb"] for r in runs) <= TARGET_MB
    print(f"  best {best['first_screen']:.2f} s -> target {'met' if met else 'MISSED'}")
    if args.whole:
        r = measure("replay-whole", jsonl)
        print(f"  read whole (before): {r['open']:.1f} s, first screen {r['first_screen']:.1f} s, peak RSS {r['peak_mb']:.0f} MiB")


def hub_start(hub: Path, args: argparse.Namespace) -> None:
    for _ in range(args.repeats):
        r = measure("hub", hub)
        print(
            f"  quick_check {r['check']:.2f} s, load_recorded {r['load']:.2f} s ({int(r['runs']):,} runs, {int(r['events']):,} events),"
            f" peak RSS {r['peak_mb']:.0f} MiB"
        )
    print(f"goldfive serve on {hub.name}: seconds from the call (modules loaded) to listening, to the first run and to all {args.hub_runs} listed")
    for _ in range(args.repeats):
        r = measure("serve", hub, str(args.hub_runs))
        print(f"  listening {r['listening']:.2f} s, first run listed {r['first']:.2f} s, all listed {r['all']:.2f} s, peak RSS {r['peak_mb']:.0f} MiB")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
