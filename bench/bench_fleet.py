"""Several hubs on one PostgreSQL database (issue 16): ``python bench/bench_fleet.py [--passes 5]``.

One run of this bench measures, against baselines measured in the same run (a warm-up, then
the median of ``--passes`` passes):

1. The store (bench/bench_store.py): PostgreSQL's append rate and per-task cost of a real run
   against SQLite's.
2. Controls: a run connected to hub A (a real runner end, ``HubLink``, answering every control
   at once, so what is measured is the hubs' path); STATUS_QUERY controls sent to A, the owning
   hub (the baseline), and to hub B, which routes them through the database (a goldfive_controls
   row + NOTIFY to A, the ack back the same way). p50 and p99 of control-to-ack.
3. Events: the same run emitting 50 events/s stamped with the time they were emitted; one
   subscriber on A (baseline) and one on B (B follows A's writes through the database).
   p50 and p99 of emit-to-subscriber.

Both hubs are ``goldfive serve --db postgresql://...`` subprocesses on 127.0.0.1; PostgreSQL is a
throwaway server (tests/pg_server.py). Nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from goldfive import events  # noqa: E402
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage  # noqa: E402
from goldfive.types import Session  # noqa: E402
from tests.pg_server import start_postgres  # noqa: E402

CONTROLS = 200
EVENT_RATE, EVENT_SECONDS = 50, 6.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_hub(dsn: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "goldfive.cli", "serve", "--db", dsn, "--listen", f"127.0.0.1:{port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return proc, f"127.0.0.1:{port}"


async def wait_up(addr: str) -> None:
    from goldfive.errors import RemoteError
    from goldfive.remote import RemoteClient

    async with RemoteClient(addr) as client:
        for _ in range(300):
            try:
                await client.list_runs(timeout=1.0)
                return
            except RemoteError:
                await asyncio.sleep(0.1)
    raise RuntimeError(f"hub {addr} did not come up")


async def controls_to(addr: str, run_id: str, n: int) -> list[float]:
    from goldfive.remote import RemoteClient

    out = []
    async with RemoteClient(addr) as client:
        for _ in range(n):
            t0 = time.perf_counter()
            ack = await client.send_control(run_id, ControlMessage(ControlKind.STATUS_QUERY), timeout=10)
            ms = (time.perf_counter() - t0) * 1000
            if ack.result is not AckResult.SUCCESS:
                raise RuntimeError(f"control failed: {ack}")
            out.append(ms)
    return out


async def measure_hubs(a: str, b: str, passes: int) -> None:
    from goldfive.link.runner import HubLink
    from goldfive.remote import RemoteClient

    session = Session(run_id="bench-fleet-run")
    channel = ControlChannel()
    link = HubLink(a, channel, close_timeout=10)

    async def answer() -> None:  # the run's control loop, reduced to acking
        while (msg := await channel.receive()) is not None:
            await channel.ack(ControlAck(msg.id, AckResult.SUCCESS, "ok"))

    answering = asyncio.create_task(answer())
    await link.emit(events.run_started(session, goal_summary="bench fleet"))
    async with RemoteClient(b) as client:
        for _ in range(200):  # B knows the run and its hub (an owner notification)
            runs = {r.run_id: r for r in await client.list_runs()}
            if "bench-fleet-run" in runs and runs["bench-fleet-run"].hub == a:
                break
            await asyncio.sleep(0.05)
        else:
            raise RuntimeError(f"hub B never saw the run on hub A ({a}): {runs}")

    await controls_to(a, session.run_id, 30)  # warm-up
    await controls_to(b, session.run_id, 30)
    own: list[list[float]] = []
    routed: list[list[float]] = []
    for _ in range(passes):
        own.append(await controls_to(a, session.run_id, CONTROLS))
        routed.append(await controls_to(b, session.run_id, CONTROLS))
    p = lambda runs, q: statistics.median(pct(r, q) for r in runs)  # noqa: E731
    print(f"control -> ack, {CONTROLS} controls per pass, median over {passes} passes of each pass's percentile")
    print(f"  to the owning hub A (baseline)   p50 {p(own, 50):6.2f} ms   p99 {p(own, 99):6.2f} ms")
    print(f"  through hub B (routed)           p50 {p(routed, 50):6.2f} ms   p99 {p(routed, 99):6.2f} ms"
          f"   x{p(routed, 50) / p(own, 50):.1f} / x{p(routed, 99) / p(own, 99):.1f}")  # fmt: skip

    # events: emit-to-subscriber on A (the hub the run writes through) and on B (following)
    lat: dict[str, list[float]] = {a: [], b: []}
    start_ns = time.time_ns() + int(1e9)

    async def watch(addr: str) -> None:
        async with RemoteClient(addr) as client:
            async for ev in client.subscribe(session.run_id, -1):
                if ev.WhichOneof("payload") == "task_progress":
                    sent = int(ev.task_progress.detail)
                    if sent >= start_ns:
                        lat[addr].append((time.time_ns() - sent) / 1e6)

    watchers = [asyncio.create_task(watch(x)) for x in (a, b)]
    end = time.monotonic() + EVENT_SECONDS + 1.0
    while time.monotonic() < end:
        await link.emit(events.task_progress(session, "t1", detail=str(time.time_ns())))
        await asyncio.sleep(1 / EVENT_RATE)
    await asyncio.sleep(1.0)
    for w in watchers:
        w.cancel()
    print(f"event -> subscriber, {EVENT_RATE} events/s for {EVENT_SECONDS:g} s after a 1 s warm-up")
    print(f"  on hub A (baseline)              p50 {pct(lat[a], 50):6.2f} ms   p99 {pct(lat[a], 99):6.2f} ms   ({len(lat[a])} events)")
    print(f"  on hub B (following A)           p50 {pct(lat[b], 50):6.2f} ms   p99 {pct(lat[b], 99):6.2f} ms   ({len(lat[b])} events)"
          f"   x{pct(lat[b], 50) / pct(lat[a], 50):.1f} / x{pct(lat[b], 99) / pct(lat[a], 99):.1f}")  # fmt: skip
    await link.emit(events.run_completed(session, outcome_summary="bench done"))
    await link.close()
    channel.close()
    answering.cancel()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--skip-store", action="store_true", help="only the two hubs")
    args = ap.parse_args()
    server = start_postgres()
    hubs: list[subprocess.Popen[bytes]] = []
    try:
        if not args.skip_store:
            import bench_store

            bench_store.measure(server, args.passes)
        import psycopg

        with psycopg.connect(server.dsn, autocommit=True) as conn:  # a database of their own: the store
            conn.execute("CREATE DATABASE bench_fleet")  # part's runs would be folded by each hub at start
        dsn = server.dsn.rsplit("/", 1)[0] + "/bench_fleet"
        proc_a, a = start_hub(dsn)
        proc_b, b = start_hub(dsn)
        hubs += [proc_a, proc_b]

        async def hubs_part() -> None:
            await wait_up(a)
            await wait_up(b)
            await measure_hubs(a, b, args.passes)

        asyncio.run(hubs_part())
    finally:
        for proc in hubs:
            proc.terminate()
            proc.wait(10)
        server.destroy()


if __name__ == "__main__":
    main()
