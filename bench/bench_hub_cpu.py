"""CPU figures of a hub and its runners that do not depend on how busy the machine is (issue 27).

Run: python bench/bench_hub_cpu.py [--runs 1000] [--ticks 50]

1. The hub's ticker: after a group commit it confirms every run that sent something (and trims
   what it holds of them in memory). With ``--runs`` runs to confirm, each holding 40 events,
   the CPU time of each step the ticker's task runs on the event loop: a control waits for the
   step running, so the longest is a floor under a control's latency.
2. A process's runs on one shared stream (``HubLink`` on a ``HubMux``, as ``Runner(hub=...)``):
   ``--runs`` runs each emit one event every 20 ms for ``--ticks`` ticks to a hub in another
   process; the CPU time of this process (the links and the stream, not building the events)
   and of the hub's process per event, until the hub confirmed every event.

3. The hub's ingest on the event loop: a shared stream (``SharedStream.read``, in process, no
   gRPC) brings ``--frames`` frames of ``--runs`` runs' events (3 each: a busy runner process's
   frame), then one run's batch of 500 (a runner resending after a reconnect). The CPU time of
   each step the stream's worker and the ticker run on the loop (a control waits for the one
   running), and of the whole loop per event stored.

4. ``--controls``: a control to a random run every 10 ms while the hub stores a frame of
   ``--runs`` runs' events every 25 ms (in process, the runners' side acking at once): the
   hub loop's CPU time from a control's send to its ack, the work it waited behind.

CPU time (not wall) is measured, so a loaded machine changes the figures little; run it on
two checkouts to compare. Nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


async def ticker(runs: int) -> list[float]:
    """CPU seconds of each step of the hub's ticker confirming ``runs`` runs."""
    from goldfive import events
    from goldfive.hub.connected import RunnerAttachment
    from goldfive.hub.service import HubService
    from goldfive.hub.shared import LaneConn, SharedStream
    from goldfive.pb.goldfive.v1 import service_pb2
    from goldfive.remote import RunHost
    from goldfive.types import Session

    steps: list[tuple[float, str]] = []
    run = asyncio.events.Handle._run

    def timed(handle: Any) -> None:
        c = time.thread_time()
        run(handle)
        task = getattr(handle._callback, "__self__", None)
        steps.append((time.thread_time() - c, task.get_name() if isinstance(task, asyncio.Task) else ""))

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            service = HubService(RunHost(os.path.join(tmp, "hub.sqlite")), confirm_interval=60)
            stream = SharedStream(service)
            for i in range(runs):
                conn = LaneConn(stream, i, service_pb2.RunnerHello(run_id=f"r{i}"))
                attachment = RunnerAttachment.new(f"r{i}", service.recorder)
                session = Session(run_id=f"r{i}")
                evs = [events.run_started(session, goal_summary="g")] + [events.task_progress(session, "t1", detail="x") for _ in range(39)]
                await attachment.ingest_batch(evs)
                conn.received = 39
                service.opened(conn)
                service.mark_stored(conn, attachment)
            await service.commit()  # the events' own write is not the ticker's confirming
            steps.clear()
            service._kick.set()  # (commit() left every run marked: the ticker confirms them all)
            while len(stream.out) < runs:
                await asyncio.sleep(0.001)
            await service.close()
    finally:
        asyncio.events.Handle._run = run  # type: ignore[method-assign]
    return [c for c, name in steps if name == "hub-confirm"]


async def ingest_steps(runs: int, frames: int, per: int = 3, big: int = 500, *, serve_gc: bool = False) -> dict[str, Any]:
    """CPU seconds of each loop step of a shared stream's worker storing ``frames`` frames of
    ``runs`` runs' events (``per`` each), then one run's batch of ``big``."""
    from goldfive import events
    from goldfive.hub.service import HubService
    from goldfive.hub.shared import SharedStream
    from goldfive.pb.goldfive.v1 import service_pb2
    from goldfive.remote import RunHost
    from goldfive.types import Session

    import gc

    steps: list[tuple[float, str]] = []
    run = asyncio.events.Handle._run
    in_gc = [0.0, 0.0]  # CPU of every collection so far; the start of the one running

    pauses: list[float] = []  # each collection's wall time
    pauses_cpu: list[float] = []  # and CPU time

    def collecting(phase: str, info: Any) -> None:
        if phase == "start":
            in_gc[1] = time.thread_time()
            pauses.append(time.perf_counter())
        else:
            in_gc[0] += time.thread_time() - in_gc[1]
            pauses[-1] = time.perf_counter() - pauses[-1]
            pauses_cpu.append(time.thread_time() - in_gc[1])

    def timed(handle: Any) -> None:  # (a collection inside a step is the collector's, not the step's)
        c, g = time.thread_time(), in_gc[0]
        run(handle)
        task = getattr(handle._callback, "__self__", None)
        name = task.get_coro().__qualname__ if isinstance(task, asyncio.Task) else ""
        steps.append((time.thread_time() - c - (in_gc[0] - g), name))

    def part(lane: int, **message: Any) -> service_pb2.RunnerPart:
        return service_pb2.RunnerPart(lane=lane, message=service_pb2.RunnerMessage(**message))

    made: list[list[Any]] = []
    for i in range(runs):
        session = Session(run_id=f"r{i}")
        evs = [events.run_started(session, goal_summary="g")]
        evs += [events.task_progress(session, "t1", detail="x" * 40) for _ in range(frames * per + (big if i == 0 else 0))]
        for seq, ev in enumerate(evs):
            ev.sequence = seq
        made.append(evs)
    todo: list[Any] = [service_pb2.RunnerFrame(parts=[part(i, hello=service_pb2.RunnerHello(run_id=f"r{i}", host="h", pid=1, resume_after=-1)) for i in range(runs)])]
    todo.append(service_pb2.RunnerFrame(parts=[part(i, events=service_pb2.EventBatch(events=made[i][:1])) for i in range(runs)]))
    for f in range(frames):
        lo = 1 + f * per
        todo.append(service_pb2.RunnerFrame(parts=[part(i, events=service_pb2.EventBatch(events=made[i][lo : lo + per])) for i in range(runs)]))
    todo.append(service_pb2.RunnerFrame(parts=[part(0, events=service_pb2.EventBatch(events=made[0][1 + frames * per :]))]))
    total = runs * frames * per + big

    with tempfile.TemporaryDirectory() as tmp:
        service = HubService(RunHost(os.path.join(tmp, "hub.sqlite")), confirm_interval=0.2)
        stream = SharedStream(service)
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def read() -> Any:
            while (frame := await queue.get()) is not None:
                yield frame

        reader = asyncio.get_running_loop().create_task(stream.read(read()))
        if serve_gc:
            from goldfive.remote.gc_tuning import tune_for_serving

            tune_for_serving()  # as goldfive serve does once started
        await queue.put(todo[0])
        await queue.put(todo[1])
        while len(stream.lanes) < runs or any(r.stored_through < 0 for _, r in stream.lanes.values()):
            await asyncio.sleep(0.01)
        asyncio.events.Handle._run = timed  # type: ignore[method-assign]
        gc.callbacks.append(collecting)
        try:
            cpu0 = time.thread_time()
            for frame in todo[2:]:
                await queue.put(frame)
            last = len(made[0]) - 1
            while stream.lanes[0][1].stored_through < last or any(r.stored_through < frames * per for _, r in stream.lanes.values()):
                await asyncio.sleep(0.001)
            cpu = time.thread_time() - cpu0
        finally:
            asyncio.events.Handle._run = run  # type: ignore[method-assign]
            gc.callbacks.remove(collecting)
        await queue.put(None)
        await reader
        stream.close_all()
        await service.close()
    work = sorted(c for c, name in steps if name.endswith("_work"))
    tick = [c for c, name in steps if name.endswith("_tick")]
    return {
        "events": total,
        "worker_steps": len(work),
        "worker_max_ms": work[-1] * 1000,
        "worker_p99_ms": work[min(len(work) - 1, int(0.99 * len(work)))] * 1000,
        "tick_max_ms": max(tick, default=0.0) * 1000,
        "loop_us_per_event": cpu / total * 1e6,
        "gc_ms": in_gc[0] * 1000,
        "gc_count": len(pauses),
        "gc_wall_ms": sum(pauses) * 1000,
        "gc_longest_ms": max(pauses, default=0.0) * 1000,
        "gc_longest_cpu_ms": max(pauses_cpu, default=0.0) * 1000,
    }


async def controls_under_ingest(runs: int, frames: int, every: float = 0.025) -> dict[str, Any]:
    """A control to a random run every 10 ms while the hub stores a frame of ``runs`` runs'
    events (one each) every ``every`` seconds, in process (a shared stream, no gRPC; the
    runner's side acks at once): per control, the hub loop's CPU time from its send to its ack
    (the work it waited behind, which a busy machine does not change) and the wall time."""
    import random

    from goldfive import events
    from goldfive.control import ControlKind, ControlMessage
    from goldfive.hub.service import HubService
    from goldfive.hub.shared import SharedStream
    from goldfive.pb.goldfive.v1 import control_pb2, service_pb2
    from goldfive.remote import RunHost
    from goldfive.types import Session

    def part(lane: int, **message: Any) -> service_pb2.RunnerPart:
        return service_pb2.RunnerPart(lane=lane, message=service_pb2.RunnerMessage(**message))

    sessions = [Session(run_id=f"r{i}") for i in range(runs)]
    with tempfile.TemporaryDirectory() as tmp:
        service = HubService(RunHost(os.path.join(tmp, "hub.sqlite")), confirm_interval=0.2)
        stream = SharedStream(service)
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def read() -> Any:
            while (frame := await queue.get()) is not None:
                yield frame

        async def runner_side() -> None:  # the runners' process: what goes down the stream, a control acked at once
            while True:
                await stream.wake.wait()
                stream.wake.clear()
                stream.sweep()
                acks = [
                    part(p.lane, ack=control_pb2.ControlAck(control_id=p.message.control.id, result=control_pb2.CONTROL_ACK_RESULT_SUCCESS))
                    for p in (stream.take() if stream.out else [])
                    if p.message.WhichOneof("body") == "control"
                ]
                if acks:
                    queue.put_nowait(service_pb2.RunnerFrame(parts=acks))

        reader = asyncio.get_running_loop().create_task(stream.read(read()))
        writer = asyncio.get_running_loop().create_task(runner_side())
        hello = [part(i, hello=service_pb2.RunnerHello(run_id=f"r{i}", host="h", pid=1, resume_after=-1)) for i in range(runs)]
        queue.put_nowait(service_pb2.RunnerFrame(parts=hello))
        first = []
        for i, session in enumerate(sessions):
            ev = events.run_started(session, goal_summary="g")
            ev.sequence = 0
            first.append(part(i, events=service_pb2.EventBatch(events=[ev])))
        queue.put_nowait(service_pb2.RunnerFrame(parts=first))
        while len(stream.lanes) < runs or any(r.stored_through < 0 for _, r in stream.lanes.values()):
            await asyncio.sleep(0.01)
        done = asyncio.Event()

        made = []  # built before: the runners' work, not the hub's
        for f in range(1, frames + 1):
            parts = []
            for i, session in enumerate(sessions):
                ev = events.task_progress(session, "t1", detail="x" * 40)
                ev.sequence = f
                parts.append(part(i, events=service_pb2.EventBatch(events=[ev])))
            made.append(service_pb2.RunnerFrame(parts=parts))

        async def feed() -> None:
            for frame in made:
                queue.put_nowait(frame)
                await asyncio.sleep(every)
            done.set()

        cpu_ms: list[float] = []
        wall_ms: list[float] = []
        feeder = asyncio.get_running_loop().create_task(feed())
        lanes = list(stream.lanes.values())
        while not done.is_set():
            _, run = random.choice(lanes)
            c, w = time.thread_time(), time.perf_counter()
            await run.run.control(ControlMessage(ControlKind.STATUS_QUERY), 30)
            cpu_ms.append((time.thread_time() - c) * 1000)
            wall_ms.append((time.perf_counter() - w) * 1000)
            await asyncio.sleep(0.01)
        await feeder
        queue.put_nowait(None)
        await reader
        writer.cancel()
        stream.close_all()
        await service.close()

    def q(v: list[float], p: float) -> float:
        v = sorted(v)
        return v[min(len(v) - 1, int(p * len(v)))]

    return {"controls": len(cpu_ms), "cpu_p50": q(cpu_ms, 0.5), "cpu_p99": q(cpu_ms, 0.99), "cpu_max": max(cpu_ms),
            "wall_p50": q(wall_ms, 0.5), "wall_p99": q(wall_ms, 0.99)}  # fmt: skip


async def hub_child() -> None:
    from goldfive.remote import RunHost, start_server

    with tempfile.TemporaryDirectory() as tmp:
        server = await start_server(RunHost(os.path.join(tmp, "hub.sqlite")), listen="127.0.0.1:0")
        print(server.address, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        await server.stop(None)


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def links(runs: int, ticks: int) -> dict[str, float]:
    from goldfive import events
    from goldfive.control import ControlChannel
    from goldfive.link import HubLink
    from goldfive.link.mux import HubMux
    from goldfive.types import Session

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    hub = subprocess.Popen([sys.executable, __file__, "--hub-child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert hub.stdout is not None and hub.stdin is not None
    addr = hub.stdout.readline().strip()
    try:
        mux = HubMux(addr)
        pairs = [(Session(run_id=f"c{i}"), HubLink(addr, ControlChannel(), mux=mux, close_timeout=60)) for i in range(runs)]
        for session, link in pairs:
            await link.emit(events.run_started(session, goal_summary="x"))
        while not all(link.confirmed == 0 for _, link in pairs):
            await asyncio.sleep(0.05)
        made = [[events.task_progress(s, "t1", detail="d") for _ in range(ticks)] for s, _ in pairs]  # not the links' cost
        hub0, cpu0, wall0 = cpu_of(hub.pid), time.process_time(), time.perf_counter()
        for t in range(ticks):
            for (_, link), evs in zip(pairs, made):
                await link.emit(evs[t])
            await asyncio.sleep(0.02)
        while not all(link.confirmed == ticks for _, link in pairs):
            await asyncio.sleep(0.01)
        cpu, hub_cpu, wall = time.process_time() - cpu0, cpu_of(hub.pid) - hub0, time.perf_counter() - wall0
        for _, link in pairs:
            await link.close()
        await mux.close()
    finally:
        hub.stdin.write("\n")
        hub.stdin.flush()
        hub.wait()
    n = runs * ticks
    return {"runner_us": cpu / n * 1e6, "hub_us": hub_cpu / n * 1e6, "wall_s": wall, "frames": mux.frames}


def main() -> None:
    if sys.argv[1:] == ["--hub-child"]:
        asyncio.run(hub_child())
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--ticks", type=int, default=50)
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--only-ingest", action="store_true", help="only 3.: the hub's ingest steps")
    ap.add_argument("--controls", action="store_true", help="only 4.: controls while the hub stores frames (--frames of them, 25 ms apart)")
    ap.add_argument("--serve-gc", action="store_true", help="in 3.: goldfive serve's collector tuning (goldfive.remote.gc_tuning)")
    args = ap.parse_args()
    if args.controls:
        got = asyncio.run(controls_under_ingest(args.runs, args.frames))
        print(f"{got['controls']} controls while the hub stored a frame of {args.runs} runs' events every 25 ms: the hub loop's CPU from "
              f"a control's send to its ack p50 {got['cpu_p50']:.2f} ms, p99 {got['cpu_p99']:.2f} ms, at most {got['cpu_max']:.2f} ms; "
              f"wall p50 {got['wall_p50']:.2f} ms, p99 {got['wall_p99']:.2f} ms")  # fmt: skip
        print(json.dumps(got))
        return
    if args.only_ingest:
        got = asyncio.run(ingest_steps(args.runs, args.frames, serve_gc=args.serve_gc))
        print(f"the hub storing {args.frames} frames of {args.runs} runs' events (3 each) and one run's batch of 500: its stream's worker ran "
              f"{got['worker_steps']} steps on the loop, the longest {got['worker_max_ms']:.1f} ms of CPU (p99 {got['worker_p99_ms']:.1f}); "
              f"the ticker's longest {got['tick_max_ms']:.1f} ms; the loop's CPU per event stored {got['loop_us_per_event']:.1f} µs "
              f"({got['gc_ms']:.0f} ms of it the collector's: {got['gc_count']} collections, the longest {got['gc_longest_ms']:.1f} ms, "
              f"{got['gc_longest_cpu_ms']:.1f} ms of CPU)")  # fmt: skip
        print(json.dumps(got))
        return
    steps = asyncio.run(ticker(args.runs))
    print(f"hub ticker confirming {args.runs} runs: {len(steps)} steps on the event loop, the longest {max(steps) * 1000:.1f} ms "
          f"of CPU, {sum(steps) * 1000:.1f} ms in all")  # fmt: skip
    got = asyncio.run(links(args.runs, args.ticks))
    print(f"{args.runs} runs on one shared stream, one event each every 20 ms for {args.ticks} ticks: {got['runner_us']:.1f} µs of the "
          f"runners' process CPU per event (links and stream), {got['hub_us']:.1f} µs of the hub's; {got['frames']:,} frames")  # fmt: skip
    print(json.dumps({"ticker_steps_ms": [round(s * 1000, 2) for s in steps], **got}))


if __name__ == "__main__":
    main()
