"""A fleet of connected runs against one hub (issue 13): does the hub keep up?

Run: python bench/bench_hub_fleet.py [--runs 1000] [--procs 3] [--rate 20] [--seconds 10] [--quick]
     [--shared-channel | --shared-stream | --runners]

The hub (``start_server``, a SQLite file in a temp dir) runs in this process. Runs are
simulated in ``--procs`` other processes, each holding its share of ``--runs`` real runner
ends (``HubLink``, what ``Runner(hub=...)`` uses, each with its own ControlChannel answered by
a small loop standing in for the run); each run emits ``--rate`` events per second. A watcher
process subscribes to a sample of runs over ``Runs.Subscribe`` and measures event-to-subscriber
latency (emit in the runner process to receipt in the watcher); a sender process (as a
person's ``goldfive ctl`` is; ``--controls-here``: this process, on the hub's own loop) sends
controls to random runs through ``SendControl`` and measures control-to-ack through the hub.

How the simulated runs reach the hub: by default each run has its own connection and
``Hub.Connect`` stream (the shape the issue first measured, kept as the reference);
``--shared-channel`` shares one connection per process, still a stream per run;
``--shared-stream`` puts the runs of a process on one ``Hub.ConnectShared`` stream, a lane
per run (``HubMux``), so one message carries the events of many runs; ``--runners`` makes
each simulated run a real ``Runner(hub=...)`` (a one-task plan whose agent reports progress
through the run; controls answered by the run's own control loop), as users run it.

Baseline, measured in the same run first: one connected run alone, the same rate, the same
measurements. Figures are printed against it and against the issue's targets:
event-to-subscriber p99 <= 100 ms, control-to-ack p99 <= 5 ms, <= 100 KB hub memory per idle
connected run. Percentiles are over the measured window after a warm-up (the first
``--warmup`` seconds are dropped). Beside them: CPU used during the load by the hub process
and by the simulators (the machine's cores are shared by all of them), the hub's garbage
collections and group commits (count and duration). Nothing here passes or fails.

Where a control's time goes, apart from waiting for a core (this machine's cores are shared):
the hub's own part (its SendControl handler's start to the frame carrying the control taken
for the runner's stream, plus the frame carrying the ack read off the stream to the handler's
return), the runner's leg (sent down to acked back), and how long the hub's event loop runs
each callback (wall and the hub thread's CPU time: a control waits for the one running; the
longest are named), events stored per second of the hub process's CPU, and the simulators' CPU
per event. ``--sim-nice 10`` runs the simulators at a lower priority, so the hub gets a core
first (as when the runs are on other machines), ``--pin`` gives the hub's process a core of
its own and the other processes the rest; ``BENCH_FLEET_PROFILE=PATH`` cProfiles each
simulator process; ``--gen0 N`` tries another young-generation threshold with ``--serve-gc``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goldfive import events  # noqa: E402
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage  # noqa: E402
from goldfive.types import Session  # noqa: E402


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of each thread of this process, by name (grpc's own threads
    poll and send outside the event loop: their CPU is part of the process's)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if tid == str(os.getpid()):
            name = "main"  # (CPython does not name its threads for the OS: tell the main one apart)
        fields = stat[stat.rindex(")") + 2 :].split()
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# -- the fleet (a child process) ---------------------------------------------------------
def _stamp_controls_in_runner() -> dict[str, list[float]]:
    """Where a control spends the runner's leg, in the runner's process: by control id, when
    its frame was read off the shared stream, when the run's ack was queued for the stream,
    and when the write of the frame carrying the ack began and returned (``time.monotonic``,
    one clock for every process on this machine, so the hub's stamps line up with these)."""
    from goldfive.link.mux import HubMux, _Lane

    stamps: dict[str, list[float]] = {}
    deliver, write_ack, write = _Lane._deliver, _Lane.write_ack, HubMux._write

    def timed_deliver(lane: Any, msg: Any) -> None:
        if msg.WhichOneof("body") == "control":
            stamps[msg.control.id] = [time.monotonic()]
        deliver(lane, msg)

    def timed_write_ack(lane: Any, msg: Any) -> bool:
        got = stamps.get(msg.ack.control_id)
        if got is not None and len(got) == 1:
            got.append(time.monotonic())
        return write_ack(lane, msg)

    class Timed:
        def __init__(self, call: Any) -> None:
            self.call = call

        def cancel(self) -> bool:
            return bool(self.call.cancel())

        async def write(self, frame: Any) -> None:
            t = time.monotonic()
            await self.call.write(frame)
            done = time.monotonic()
            for part in frame.parts if not isinstance(frame, bytes) else ():  # (a frame with events goes as bytes: acks go apart)
                if part.message.WhichOneof("body") == "ack":
                    got = stamps.get(part.message.ack.control_id)
                    if got is not None and len(got) == 2:
                        got += [t, done]

    async def timed_write(mux: Any, call: Any) -> None:
        await write(mux, Timed(call))

    _Lane._deliver = timed_deliver  # type: ignore[method-assign]
    _Lane.write_ack = timed_write_ack  # type: ignore[method-assign]
    HubMux._write = timed_write  # type: ignore[method-assign]
    try:  # a hub that takes acks apart: they are written on the mux's acks call (goldfive.link.acks)
        from goldfive.link.acks import AckSide
    except ImportError:
        return stamps
    made = AckSide.__init__

    def timed_init(side: Any, *args: Any, **kwargs: Any) -> None:
        made(side, *args, **kwargs)
        side._call = Timed(side._call)

    AckSide.__init__ = timed_init  # type: ignore[method-assign]
    return stamps


async def runner_fleet(addr: str, prefix: str, count: int, rate: float, seconds: float) -> None:
    """``--runners``: each run is a real ``Runner(hub=addr)`` (its default: one shared
    ``Hub.ConnectShared`` stream for the process) whose one task reports progress ``rate``
    times a second through the run (``goldfive.run.current().emit``); controls are answered by
    the run's own control loop, as for a user's run."""
    import goldfive.run
    from goldfive.link.runner import HubLink
    from goldfive.planners.static import StaticPlanner
    from goldfive.runner import Runner
    from goldfive.types import Goal, Plan, Task

    go = asyncio.Event()
    window: list[float] = []
    late = [0]
    emitted = [0]

    async def agent(task: Task, session: Session) -> str:
        await go.wait()
        ctx = goldfive.run.current()
        interval = 1.0 / rate
        tick, end = window
        tick += random.random() * interval  # the runs' ticks spread over the interval
        while tick < end:
            await ctx.emit(events.task_progress, task.id, detail=str(time.time_ns()))
            emitted[0] += 1
            tick += interval
            delay = tick - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                late[0] += 1
                await asyncio.sleep(0)
        return "ok"

    stamps = _stamp_controls_in_runner()
    runners = [
        Runner(agent=agent, planner=StaticPlanner(Plan(tasks=[Task("t1", "report")], edges=[], id="p")), run_id=f"{prefix}-{i:04d}", hub=addr)
        for i in range(count)
    ]
    runs = [asyncio.create_task(r.run([Goal("g1", f"fleet run {i}")])) for i, r in enumerate(runners)]
    start_at = float(await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline))
    await asyncio.sleep(max(0.0, start_at - time.time()))
    now = time.monotonic()
    window[:] = [now, now + seconds]
    cpu0 = time.process_time()
    threads0 = thread_cpu()
    gc_pauses = GcPauses()  # the runner process's own collections and loop lag (a control waits for both)
    lags: list[float] = []

    async def lag() -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append((time.perf_counter() - t - 0.01) * 1000)

    lagger = asyncio.get_running_loop().create_task(lag())
    go.set()
    links = [s for r in runners for s in r.sinks if isinstance(s, HubLink)]
    await asyncio.sleep(max(0.0, window[1] - time.monotonic()))
    load_cpu = (time.process_time() - cpu0) / seconds
    lagger.cancel()
    gc_seen = gc_pauses.since(0)
    gc_gens = gc_pauses.by_generation_text(0)
    tracked = tracked_objects()  # at the end of the load, before the drain: what the collector walks under load
    unconfirmed = sum(len(link.buffer) for link in links)
    t0 = time.monotonic()
    await asyncio.gather(*runs, return_exceptions=True)  # each run ends and closes its link (confirmed or not)
    drain = time.monotonic() - t0
    cpu_all = time.process_time() - cpu0  # every event emitted, sent and confirmed: CPU per event
    threads = {k: round(v - threads0.get(k, 0.0), 2) for k, v in thread_cpu().items()}
    left = sum(len(link.buffer) for link in links)
    for r in runners:
        await r.close()
    print(json.dumps({"emitted": emitted[0], "late_ticks": late[0], "unconfirmed_at_end": unconfirmed, "drain_s": drain, "left": left,
                      "frames": 0, "load_cpu": load_cpu, "cpu_all": cpu_all, "threads": threads, "stamps": stamps,
                      "gc": gc_seen, "gc_gens": gc_gens, "tracked": tracked, "lag_p50": pct(lags, 50), "lag_p99": pct(lags, 99), "lag_max": max(lags, default=0.0)}), flush=True)  # fmt: skip


async def fleet(addr: str, prefix: str, count: int, rate: float, seconds: float, shared: str) -> None:
    if shared == "runners":
        await runner_fleet(addr, prefix, count, rate, seconds)
        return
    import grpc

    from goldfive.link.runner import HubLink

    links: list[tuple[Session, HubLink, ControlChannel]] = []
    one = grpc.aio.insecure_channel(addr) if shared == "channel" else None
    mux: Any = None
    if shared == "stream":
        from goldfive.link.mux import HubMux

        mux = HubMux(addr)
    for i in range(count):
        session = Session(run_id=f"{prefix}-{i:04d}")
        channel = ControlChannel()
        link = HubLink(addr, channel, close_timeout=30, grpc_channel=one, **({"mux": mux} if mux is not None else {}))
        links.append((session, link, channel))
        await link.emit(events.run_started(session, goal_summary=f"fleet run {i}"))

    async def answer(channel: ControlChannel) -> None:  # the run's control loop, reduced to acking
        while (msg := await channel.receive()) is not None:
            await channel.ack(ControlAck(msg.id, AckResult.SUCCESS, "ok"))

    answerers = [asyncio.create_task(answer(ch)) for _, _, ch in links]
    start_at = float(await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline))  # "go" from the bench
    await asyncio.sleep(max(0.0, start_at - time.time()))
    interval = 1.0 / rate
    cpu0 = time.process_time()
    emitted = 0
    late = 0
    tick = time.monotonic()
    end = tick + seconds
    while tick < end:
        for session, link, _ in links:
            await link.emit(events.task_progress(session, "t1", detail=str(time.time_ns())))
            emitted += 1
        tick += interval
        delay = tick - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        else:
            late += 1
            await asyncio.sleep(0)
    load_cpu = (time.process_time() - cpu0) / seconds
    unconfirmed = sum(len(link.buffer) for _, link, _ in links)
    t0 = time.monotonic()
    for _, link, _ in links:
        try:
            await link.close()
        except Exception:
            pass
    drain = time.monotonic() - t0
    left = sum(len(link.buffer) for _, link, _ in links)
    for task in answerers:
        task.cancel()
    frames = mux.frames if mux is not None else 0
    if mux is not None:
        await mux.close()
    print(json.dumps({"emitted": emitted, "late_ticks": late, "unconfirmed_at_end": unconfirmed, "drain_s": drain, "left": left,
                      "frames": frames, "load_cpu": load_cpu}), flush=True)  # fmt: skip


# -- the watcher (a child process) -------------------------------------------------------
async def watch(addr: str, run_ids: list[str], from_ns: int, seconds: float) -> None:
    from goldfive.remote import RemoteClient

    lat_ms: list[float] = []

    async def one(client: RemoteClient, run_id: str) -> None:
        while True:  # the run may not be registered yet
            try:
                async for ev in client.subscribe(run_id):
                    if ev.WhichOneof("payload") == "task_progress":
                        sent = int(ev.task_progress.detail)
                        if sent >= from_ns:
                            lat_ms.append((time.time_ns() - sent) / 1e6)
                return
            except Exception:
                await asyncio.sleep(0.2)

    async with RemoteClient(addr) as client:
        tasks = [asyncio.create_task(one(client, r)) for r in run_ids]
        await asyncio.sleep(seconds)
        for t in tasks:
            t.cancel()
    print(json.dumps({"latencies_ms": lat_ms}), flush=True)


# -- the hub and the measurements (this process) -----------------------------------------
SIM_NICE = 0


#: ``--pin``: the cores of the other processes (the hub's process keeps core 0 to itself).
OTHER_CPUS: set[int] = set()


def spawn(*args: str, nice: int = 0) -> subprocess.Popen[str]:
    # The child takes its cores and niceness itself (``_take_cores``), not in a preexec_fn:
    # that makes Popen fork this process, whose gRPC threads are busy serving, and gRPC skips
    # its fork handlers then ("Other threads are currently calling into gRPC, skipping fork()
    # handlers"): now and then the child died before it ran the bench, printing nothing.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCH_NICE": str(nice), "BENCH_CPUS": ",".join(map(str, sorted(OTHER_CPUS)))}
    return subprocess.Popen([sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


def _take_cores() -> None:
    """In a child: the cores (``--pin``) and niceness (``--sim-nice``) ``spawn`` gave it."""
    cpus = os.environ.pop("BENCH_CPUS", "")
    if cpus:
        os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
    nice = int(os.environ.pop("BENCH_NICE", "0") or 0)
    if nice:
        os.nice(nice)


def _ended(proc: subprocess.Popen[str]) -> str:
    rc = proc.returncode
    if rc is not None and rc < 0:
        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with code {rc}"


async def result_of(proc: subprocess.Popen[str], what: str) -> Any:
    """The JSON line a child prints last; when it printed none (it died), SystemExit saying
    which child and how it ended (its own traceback, if any, is on stderr above)."""
    out = (await asyncio.to_thread(proc.communicate))[0].strip().splitlines()  # in a thread: the hub serves on this loop
    if proc.returncode != 0 or not out:
        last = f"last printed {out[-1][:200]!r}" if out else "printed nothing"
        raise SystemExit(f"bench_hub_fleet: the {what} (pid {proc.pid}) {_ended(proc)} and {last}")
    return json.loads(out[-1])


def go(child: subprocess.Popen[str], start_at: float, what: str) -> None:
    """Tell a simulator when to start its load; SystemExit when it is gone already."""
    assert child.stdin is not None
    try:
        child.stdin.write(f"{start_at}\n")
        child.stdin.flush()
    except BrokenPipeError:
        child.wait()
        raise SystemExit(f"bench_hub_fleet: the {what} (pid {child.pid}) {_ended(child)} before its load began") from None


class RunnerLeg:
    """Where a control's time through the hub goes: recording it as routed (``routed_ms``, a
    write to the hub's registry), then from its send down the runner's stream to its ack
    arriving back (``ms``, the runner process's share of control-to-ack)."""

    def __init__(self) -> None:
        from goldfive.hub.connected import RunnerAttachment

        self.ms: list[float] = []
        self.routed_ms: list[float] = []
        sent: dict[str, float] = {}
        record, acked = RunnerAttachment._record_routed, RunnerAttachment.acked

        async def record_routed(run: Any, msg: Any) -> Any:
            t = time.perf_counter()
            try:
                return await record(run, msg)
            finally:
                sent[msg.id] = now = time.perf_counter()
                self.routed_ms.append((now - t) * 1000)

        def on_ack(run: Any, pb: Any) -> None:
            t = sent.pop(pb.control_id, None)
            if t is not None:
                self.ms.append((time.perf_counter() - t) * 1000)
            acked(run, pb)

        from goldfive.remote.service import RunsService

        self.handler_ms: list[float] = []
        send_control = RunsService.SendControl

        async def timed(service: Any, request: Any, context: Any) -> Any:
            t = time.perf_counter()
            try:
                return await send_control(service, request, context)
            finally:
                self.handler_ms.append((time.perf_counter() - t) * 1000)

        RunsService.SendControl = timed  # type: ignore[method-assign]
        RunnerAttachment._record_routed = record_routed  # type: ignore[method-assign]
        RunnerAttachment.acked = on_ack  # type: ignore[method-assign]

        # The hub's own legs of a control, by its id: from the handler's start to the frame
        # carrying the control taken for the runner's stream (``out_ms``), and from the frame
        # carrying its ack read off the stream to the handler's return (``back_ms``).
        from goldfive.hub.shared import SharedStream

        self.out_ms: list[float] = []
        self.back_ms: list[float] = []
        self.hub_ms: list[float] = []
        arrived: dict[str, float] = {}
        out_of: dict[str, float] = {}
        ack_read: dict[str, float] = {}
        take, acks_first = SharedStream.take, SharedStream._acks_first
        #: By control id: when the frame carrying it was taken for the runner's stream, and
        #: when the frame carrying its ack was read (time.monotonic, as the runner's stamps).
        self.taken: dict[str, float] = {}
        self.ack_read: dict[str, float] = {}

        def timed_take(stream: Any) -> Any:
            parts = take(stream)
            now = time.perf_counter()
            for part in parts:
                if part.HasField("message") and part.message.WhichOneof("body") == "control":
                    cid = part.message.control.id
                    self.taken[cid] = time.monotonic()
                    t = arrived.get(cid)
                    if t is not None:
                        out_of[cid] = (now - t) * 1000
            return parts

        def timed_acks_first(stream: Any, parts: Any) -> Any:
            now = time.perf_counter()
            for part in parts:
                if part.message.WhichOneof("body") == "ack":
                    ack_read[part.message.ack.control_id] = now
                    self.ack_read[part.message.ack.control_id] = time.monotonic()
            return acks_first(stream, parts)

        async def timed_outer(service: Any, request: Any, context: Any) -> Any:
            cid = request.control.id
            arrived[cid] = time.perf_counter()
            try:
                return await timed(service, request, context)
            finally:
                end = time.perf_counter()
                arrived.pop(cid, None)
                out, back = out_of.pop(cid, None), ack_read.pop(cid, None)
                if out is not None and back is not None:
                    self.out_ms.append(out)
                    self.back_ms.append((end - back) * 1000)
                    self.hub_ms.append(out + (end - back) * 1000)

        SharedStream.take = timed_take  # type: ignore[method-assign]
        SharedStream._acks_first = timed_acks_first  # type: ignore[method-assign]
        RunsService.SendControl = timed_outer  # type: ignore[method-assign]


class Slices:
    """How long the hub's event loop runs each callback (a task's step, an I/O callback):
    the loop cannot wake for a control until the one running returns. Each over 1 ms is kept
    (wall and the hub thread's CPU time, less any garbage collection inside it, which is
    counted as the collector's; and what it ran), to tell long slices of work (CPU) from
    slices that waited for a core (wall much more than CPU)."""

    def __init__(self) -> None:
        self.long: list[tuple[float, float, str]] = []
        self.count = 0
        run = asyncio.events.Handle._run
        me = self

        def timed_run(handle: Any) -> None:
            w, c, g = time.perf_counter(), time.thread_time(), GC.cpu
            run(handle)
            wall = time.perf_counter() - w
            me.count += 1
            if wall > 0.001:  # the CPU of a collection that ran inside is the collector's, not this callback's
                me.long.append((wall * 1000, (time.thread_time() - c - (GC.cpu - g)) * 1000, _what(handle)))

        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]

    def since(self, n: int, count0: int) -> dict[str, Any]:
        p = self.long[n:]
        cpus = sorted(x[1] for x in p)
        worst: dict[str, float] = {}
        for _, cpu, what in p:
            worst[what] = max(worst.get(what, 0.0), cpu)
        top = sorted(worst.items(), key=lambda kv: -kv[1])[:6]
        return {
            "callbacks": self.count - count0,
            "over_1ms": len(p),
            "over_1ms_cpu_p99": pct(cpus, 99),
            "cpu_max": cpus[-1] if cpus else float("nan"),
            "wall_max": max((x[0] for x in p), default=float("nan")),
            "over_5ms_cpu": sum(1 for x in cpus if x > 5),
            "top": [f"{what} {ms:.1f} ms" for what, ms in top],
        }


def _what(handle: Any) -> str:
    cb = getattr(handle, "_callback", None)
    task = getattr(cb, "__self__", None)
    if isinstance(task, asyncio.Task):
        coro = task.get_coro()
        frame = getattr(coro, "cr_frame", None)
        code = getattr(coro, "cr_code", None) or getattr(frame, "f_code", None)
        return f"task {getattr(code, 'co_qualname', '?')}"
    return getattr(cb, "__qualname__", repr(cb))[:60]


async def controls(addr: str, run_ids: list[str], from_t: float, until_t: float, every: float) -> list[float]:
    from goldfive.remote import RemoteClient

    out: list[float] = []
    async with RemoteClient(addr) as client:
        while time.time() < until_t:
            rid = random.choice(run_ids)
            t0 = time.perf_counter()
            try:
                ack = await client.send_control(rid, ControlMessage(ControlKind.STATUS_QUERY), timeout=10)
            except Exception:
                ack = None
            ms = (time.perf_counter() - t0) * 1000
            if ack is not None and ack.result is AckResult.SUCCESS and time.time() >= from_t:
                out.append(ms)
            await asyncio.sleep(every)
    return out


async def phase(
    server: Any, host: Any, addr: str, *, runs: int, procs: int, rate: float, seconds: float, warmup: float, label: str, shared: str
) -> dict[str, Any]:
    from goldfive.hub import runner_of

    prefix = f"{label}-{int(time.time() * 1000) % 100000}"
    per = [runs // procs + (1 if i < runs % procs else 0) for i in range(procs)]
    gc.collect()
    before = rss_kb()
    children = [
        spawn("--fleet", addr, f"{prefix}-p{i}", str(n), str(rate), str(seconds), shared, nice=SIM_NICE)
        for i, n in enumerate(per)
        if n
    ]
    ids = [f"{prefix}-p{i}-{j:04d}" for i, n in enumerate(per) for j in range(n)]
    # Idle: every run connected and its first event stored (at most 120 s on a loaded machine).
    t0 = time.monotonic()
    while True:
        mine = [a for a in map(runner_of, host.runs()) if a is not None and a.run_id.startswith(prefix)]
        if len(mine) == runs and all(r.stored_through >= 0 and r.conn is not None for r in mine):
            break
        if time.monotonic() - t0 > 120:
            break
        await asyncio.sleep(0.1)
    connect_s = time.monotonic() - t0
    await asyncio.sleep(1.0)
    gc.collect()
    idle_kb = (rss_kb() - before) / max(len(mine), 1)
    connected_before_load = len(mine)
    start_at = time.time() + 2.0
    sample = random.sample(ids, min(50, len(ids)))
    from_ns = int((start_at + warmup) * 1e9)
    watcher = spawn("--watch", addr, str(from_ns), str(2.0 + seconds + 1.0), *sample)
    for i, c in enumerate(children):
        go(c, start_at, f"simulator process {i} of phase {label!r}")

    hub = next((x for x in getattr(server, "extra", []) if hasattr(x, "commits")), None)
    commits0 = (hub.commits, hub.commit_seconds) if hub is not None else (0, 0.0)
    gc0 = len(GC.pauses)
    lags: list[float] = []

    async def lag() -> None:  # how late the hub's event loop wakes a 10 ms timer
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append((time.perf_counter() - t - 0.01) * 1000)

    lagger = asyncio.get_running_loop().create_task(lag())
    leg0, routed0, handler0 = len(LEG.ms), len(LEG.routed_ms), len(LEG.handler_ms)
    hub0 = len(LEG.hub_ms)
    mono_from = time.monotonic() + (start_at + warmup - time.time())  # the measured window, on the runners' clock

    async def measured_from() -> None:  # the hub's per-control figures count from the window too, as the sender's do
        nonlocal leg0, routed0, handler0, hub0
        await asyncio.sleep(max(0.0, mono_from - time.monotonic()))
        leg0, routed0, handler0, hub0 = len(LEG.ms), len(LEG.routed_ms), len(LEG.handler_ms), len(LEG.hub_ms)

    marker = asyncio.get_running_loop().create_task(measured_from())
    slices0, count0 = len(SLICES.long), SLICES.count
    cpu0, wall0 = time.process_time(), time.perf_counter()
    hub_threads0 = thread_cpu()
    prof = None
    if PROFILE and label == "fleet":
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    if CONTROLS_HERE:
        acks = await controls(addr, ids, start_at + warmup, start_at + seconds, 0.02)
    else:  # as a person's ctl does: from a process of its own, not the hub's loop
        sender = spawn("--controls", addr, str(start_at + warmup), str(start_at + seconds), "0.02", *ids)
        acks = (await result_of(sender, "control sender process"))["acks_ms"]
    if prof is not None:
        prof.disable()
        prof.dump_stats(PROFILE)
    # Keep-up: what the hub held when the load stopped, against what was offered.
    await asyncio.sleep(max(0.0, start_at + seconds - time.time()))
    held_at_end = sum(r.state.kind_counts.get("task_progress", 0) for r in host.runs() if r.run_id.startswith(prefix))
    census = tracked_census()  # at the load's end, before anything is collected
    held = held_at_end
    cpu_used = time.process_time() - cpu0
    hub_threads = {k: round(v - hub_threads0.get(k, 0.0), 2) for k, v in thread_cpu().items()}
    hub_cpu = cpu_used / (time.perf_counter() - wall0)  # this process: the hub (and the control sender)
    lagger.cancel()
    commits = (hub.commits - commits0[0], hub.commit_seconds - commits0[1], hub.commit_max_seconds) if hub is not None else None
    # The hub serves in this loop: wait for the children in threads, never blocking it.
    outs = [await result_of(c, f"simulator process {i} of phase {label!r}") for i, c in enumerate(children)]
    marker.cancel()
    legs = runner_legs(LEG, [o.get("stamps", {}) for o in outs], mono_from)
    lat = (await result_of(watcher, "watcher process"))["latencies_ms"]
    emitted = sum(o["emitted"] for o in outs)
    return {
        "runs": runs,
        "connected_before_load": connected_before_load,
        "connect_s": connect_s,
        "idle_kb_per_run": idle_kb,
        "offered_eps": runs * rate,
        "emitted": emitted,
        "held_at_end": held_at_end,
        "late_ticks": sum(o["late_ticks"] for o in outs),
        "drain_s": max(o["drain_s"] for o in outs),
        "left_unconfirmed": sum(o["left"] for o in outs),
        "event_p50": pct(lat, 50),
        "event_p99": pct(lat, 99),
        "events_measured": len(lat),
        "ack_p50": pct(acks, 50),
        "ack_p99": pct(acks, 99),
        "acks_measured": len(acks),
        "hub_cpu": hub_cpu,
        "frames": sum(o.get("frames", 0) for o in outs),
        "sim_cpu": sum(o["load_cpu"] for o in outs),
        "sim_cpu_per_event_us": sum(o.get("cpu_all", 0.0) for o in outs) / max(emitted, 1) * 1e6,
        "sim_threads": _sum_threads(o.get("threads", {}) for o in outs),
        "commits": commits,
        "gc": GC.since(gc0),
        "gc_by_gen": GC.by_generation(gc0),
        "census": census,
        "loop_lag_p99": pct(lags, 99),
        "runner_leg_p50": pct(LEG.ms[leg0:], 50),
        "runner_leg_p99": pct(LEG.ms[leg0:], 99),
        "handler_p50": pct(LEG.handler_ms[handler0:], 50),
        "handler_p99": pct(LEG.handler_ms[handler0:], 99),
        "routed_p50": pct(LEG.routed_ms[routed0:], 50),
        "routed_p99": pct(LEG.routed_ms[routed0:], 99),
        "routed_max": max(LEG.routed_ms[routed0:], default=float("nan")),
        "loop_lag_max": max(lags, default=float("nan")),
        "loop_lag_p50": pct(lags, 50),
        "hub_p50": pct(LEG.hub_ms[hub0:], 50),
        "hub_p99": pct(LEG.hub_ms[hub0:], 99),
        "out_p50": pct(LEG.out_ms[hub0:], 50),
        "out_p99": pct(LEG.out_ms[hub0:], 99),
        "back_p50": pct(LEG.back_ms[hub0:], 50),
        "back_p99": pct(LEG.back_ms[hub0:], 99),
        "slices": SLICES.since(slices0, count0),
        "legs": legs,
        "hub_threads": hub_threads,
        "runner_procs": [{k: o.get(k) for k in ("gc", "gc_gens", "tracked", "lag_p50", "lag_p99", "lag_max")} for o in outs],
        "ingest_eps_per_hub_cpu_s": held / cpu_used if cpu_used else float("nan"),
    }


#: The runner's leg of a control, split by the stamps of both processes (see
#: _stamp_controls_in_runner): name -> (stamp from, stamp to), indexes into
#: [taken by the hub, read by the runner, ack queued, ack frame's write began, returned, ack read by the hub].
_LEGS = {
    "down (hub's frame taken -> read in the runner)": (0, 1),
    "in the runner (read -> ack queued)": (1, 2),
    "queued (ack queued -> its frame's write began)": (2, 3),
    "written (the ack frame's write, to its return)": (3, 4),
    "up (write returned -> read by the hub)": (4, 5),
}


def runner_legs(leg: Any, stamps: list[dict[str, list[float]]], mono_from: float) -> dict[str, list[float]]:
    """p50 and p99 (ms) of each part of the runner's leg, over the controls the hub sent in the
    measured window and whose every stamp is known."""
    parts: dict[str, list[float]] = {name: [] for name in _LEGS}
    for by_id in stamps:
        for cid, got in by_id.items():
            taken, read = leg.taken.get(cid), leg.ack_read.get(cid)
            if taken is None or read is None or len(got) != 4 or taken < mono_from:
                continue
            t = [taken, *got, read]
            for name, (a, b) in _LEGS.items():
                parts[name].append((t[b] - t[a]) * 1000)
    return {name: [pct(v, 50), pct(v, 99), len(v)] for name, v in parts.items()}


def _sum_threads(per_proc: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for threads in per_proc:
        for name, cpu in threads.items():
            out[name] = round(out.get(name, 0.0) + cpu, 2)
    return out


class GcPauses:
    """Collections of the hub process's garbage collector: how long each held it (wall) and
    the CPU time it took (the rest of the wall time, the machine ran something else)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float, float]] = []
        self._t = self._c = 0.0
        self.cpu = 0.0  # CPU time of every collection so far
        self.collected = [0, 0, 0]  # unreachable objects freed, by generation
        gc.callbacks.append(self._cb)

    def _cb(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t, self._c = time.perf_counter(), time.thread_time()
        else:
            cpu = time.thread_time() - self._c
            self.cpu += cpu
            self.pauses.append((info["generation"], time.perf_counter() - self._t, cpu))
            self.collected[info["generation"]] += info["collected"]

    def by_generation(self, n: int) -> dict[str, list[float]]:
        """By generation: [collections, total CPU ms, longest CPU ms, longest wall ms]."""
        out: dict[str, list[float]] = {}
        for gen, wall, cpu in self.pauses[n:]:
            got = out.setdefault(str(gen), [0, 0.0, 0.0, 0.0])
            got[0] += 1
            got[1] += cpu * 1000
            got[2] = max(got[2], cpu * 1000)
            got[3] = max(got[3], wall * 1000)
        for g, v in out.items():
            v.append(self.collected[int(g)])
        return {g: [round(x, 1) for x in v] for g, v in sorted(out.items())}

    def since(self, n: int) -> str:
        p = self.pauses[n:]
        if not p:
            return "none"
        worst = max(p, key=lambda x: x[1])
        return (
            f"{len(p)} collections, {sum(x[1] for x in p) * 1000:.0f} ms in all ({sum(x[2] for x in p) * 1000:.0f} ms of CPU), "
            f"the longest {worst[1] * 1000:.0f} ms ({worst[2] * 1000:.0f} ms of CPU, generation {worst[0]})"
        )

    def by_generation_text(self, n: int) -> str:
        """Per generation, as a line: collections, their CPU in all and the longest's (ms)."""
        out = []
        for g in (0, 1, 2):
            p = [x for x in self.pauses[n:] if x[0] == g]
            if p:
                out.append(f"gen{g} {len(p)} x, {sum(x[2] for x in p) * 1000:.0f} ms CPU, longest {max(x[2] for x in p) * 1000:.1f} ms")
        return "; ".join(out) or "none"


def tracked_objects(top: int = 6) -> str:
    """Objects the cyclic collector tracks, in all and by type (the most common), and how many
    sit in the oldest generation (what a full collection walks)."""
    from collections import Counter

    objs = gc.get_objects()
    kinds = Counter(type(o).__name__ for o in objs)
    old = len(gc.get_objects(generation=2))
    del objs
    return f"{sum(kinds.values()):,} tracked ({old:,} in generation 2): " + ", ".join(f"{k} {v:,}" for k, v in kinds.most_common(top))


def tracked_census(top: int = 6) -> dict[str, Any]:
    """The objects the collector tracks in each generation of the hub's process now (the
    older generations' are what makes their collections long), and the most common types."""
    out: dict[str, Any] = {}
    for gen in (0, 1, 2):
        objs = gc.get_objects(generation=gen)
        kinds: dict[str, int] = {}
        for o in objs:
            name = type(o).__name__
            kinds[name] = kinds.get(name, 0) + 1
        del objs
        out[str(gen)] = {"count": sum(kinds.values()), "top": sorted(kinds.items(), key=lambda kv: -kv[1])[:top]}
    return out


CONTROLS_HERE = False
GC = GcPauses()
SLICES: Any = None  # made in the hub's process only (main)
LEG: Any = None
PROFILE = ""


async def main(args: argparse.Namespace) -> None:
    global LEG, PROFILE, CONTROLS_HERE, SIM_NICE, SLICES
    SIM_NICE = args.sim_nice
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)
    if args.pin:  # before the server starts: its threads inherit this thread's cores
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            raise SystemExit("--pin needs at least two cores")
        os.sched_setaffinity(0, {cpus[0]})
        OTHER_CPUS.update(cpus[1:])
    SLICES = Slices()
    LEG = RunnerLeg()
    PROFILE = args.profile
    CONTROLS_HERE = args.controls_here
    from goldfive.remote import RunHost, start_server

    with tempfile.TemporaryDirectory() as tmp:
        host = RunHost(Path(tmp) / "hub.sqlite")
        server = await start_server(host, listen="127.0.0.1:0")
        if args.serve_gc:
            from goldfive.remote.gc_tuning import tune_for_serving

            tune_for_serving(*([args.gen0] if args.gen0 else []))  # as goldfive serve does once started, before any phase
        try:
            shared = "runners" if args.runners else "stream" if args.shared_stream else "channel" if args.shared_channel else "none"
            common = dict(rate=args.rate, seconds=args.seconds, warmup=args.warmup, shared=shared)
            base = await phase(server, host, server.address, runs=1, procs=1, label="base", **common)  # type: ignore[arg-type]
            big = await phase(server, host, server.address, runs=args.runs, procs=args.procs, label="fleet", **common)  # type: ignore[arg-type]
            tuned = None
            if args.gc_tuned:
                from goldfive.remote.gc_tuning import tune_for_serving

                tune_for_serving()  # what goldfive serve does once it has started
                tuned = await phase(server, host, server.address, runs=args.runs, procs=args.procs, label="tuned", **common)  # type: ignore[arg-type]
        finally:
            await server.stop(None)
    conns = (
        "real Runner(hub=...) runs, their default shared stream"
        if args.runners
        else "one Hub.ConnectShared stream per process"
        if args.shared_stream
        else "one connection per process" if args.shared_channel else "one connection per run"
    )
    if args.sim_nice:
        conns += f", at niceness {args.sim_nice}"
    if args.switch_interval:
        conns += f"; the hub's switch interval {args.switch_interval * 1000:g} ms"
    if args.pin:
        conns += f"; the hub pinned to a core of its own, the rest to {len(OTHER_CPUS)} other(s)"
    print(f"hub fleet: {args.runs} connected runs from {args.procs} processes ({conns}), {args.rate:g} events/s each, "
          f"{args.seconds:g} s measured after {args.warmup:g} s warm-up; machine load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{'':36}{'1 run alone':>14}{'fleet':>14}{'ratio':>8}   target")
    rows = [
        ("event -> subscriber p50 (ms)", "event_p50", ""),
        ("event -> subscriber p99 (ms)", "event_p99", "<= 100"),
        ("control -> ack p50 (ms)", "ack_p50", ""),
        ("control -> ack p99 (ms)", "ack_p99", "<= 5"),
    ]
    for name, key, target in rows:
        ratio = big[key] / base[key] if base[key] else float("nan")
        print(f"{name:36}{base[key]:>14.2f}{big[key]:>14.2f}{ratio:>7.1f}x   {target}")
    if tuned is not None:
        print(f"the same fleet again after goldfive serve's gc tuning (goldfive.remote.gc_tuning: gc.freeze(), young threshold "
              f"700 -> 20,000), same process, measured second:")
        for name, key, target in rows:
            ratio = tuned[key] / big[key] if big[key] else float("nan")
            print(f"{name:36}{big[key]:>14.2f}{tuned[key]:>14.2f}{ratio:>7.2f}x of untuned   {target}")
        print(f"  garbage collector, untuned: {big['gc']}")
        print(f"  garbage collector, tuned:   {tuned['gc']}")
        print(f"  event loop lag p99 / max: untuned {big['loop_lag_p99']:.1f} / {big['loop_lag_max']:.0f} ms, "
              f"tuned {tuned['loop_lag_p99']:.1f} / {tuned['loop_lag_max']:.0f} ms; hub CPU untuned {big['hub_cpu']:.0%}, tuned {tuned['hub_cpu']:.0%}")
    print(f"{'hub memory per idle run (KB)':36}{'':>14}{big['idle_kb_per_run']:>14.1f}{'':>8}   <= 100")
    kept = big["held_at_end"] / big["emitted"] if big["emitted"] else float("nan")
    print(f"keeping up: {big['connected_before_load']}/{big['runs']} runs connected (in {big['connect_s']:.1f} s) before the load; offered "
          f"{big['offered_eps']:,.0f} events/s; the hub held {kept:.1%} of the {big['emitted']:,} emitted events when the "
          f"load stopped; the rest confirmed within {big['drain_s']:.2f} s ({big['left_unconfirmed']} never); "
          f"{big['late_ticks']} emit ticks ran late in the fleet processes")  # fmt: skip
    print(f"CPU during the load: the hub process {big['hub_cpu']:.0%} of one core (baseline {base['hub_cpu']:.0%}), "
          f"the simulators {big['sim_cpu']:.0%} of one core in all "
          f"({big['sim_cpu_per_event_us']:.0f} µs of their CPU per event, sent and confirmed), on {os.cpu_count()} cores"
          + (f"; {big['frames']:,} frames sent by the simulators" if big["frames"] else ""))  # fmt: skip
    if big.get("hub_threads"):
        print("  the hub process's CPU seconds by thread during the load (main: its event loop; python: its other Python "
              "threads, the group commit's among them): "
              + ", ".join(f"{k} {v:.2f}" for k, v in sorted(big["hub_threads"].items(), key=lambda kv: -kv[1]) if v))  # fmt: skip
    if big["sim_threads"]:
        print("  the simulators' CPU seconds by thread (the load and the drain): "
              + ", ".join(f"{k} {v:.2f}" for k, v in sorted(big["sim_threads"].items(), key=lambda kv: -kv[1])))  # fmt: skip
    print(f"of control -> ack, from the hub's send down the runner's stream to the ack back: p50 {big['runner_leg_p50']:.2f} ms, "
          f"p99 {big['runner_leg_p99']:.2f} ms (one run alone {base['runner_leg_p50']:.2f} / {base['runner_leg_p99']:.2f} ms)")  # fmt: skip
    for name, (p50, p99, n) in big["legs"].items():
        if n:
            print(f"  of the runner's leg, {name}: p50 {p50:.2f} ms, p99 {p99:.2f} ms ({n} controls)")
    for i, rp in enumerate(big.get("runner_procs", [])):
        if rp.get("gc") is not None:
            print(f"  runner process {i}: its loop woke a 10 ms timer late by {rp['lag_p50']:.1f} ms at p50, {rp['lag_p99']:.1f} at p99, "
                  f"{rp['lag_max']:.0f} at most; its garbage collector: {rp['gc']}")  # fmt: skip
            print(f"    by generation: {rp.get('gc_gens')}; objects at the end of the load: {rp.get('tracked')}")
    print(f"of control -> ack, in the hub's SendControl handler (the rest is gRPC and the event loop between the client and it): "
          f"p50 {big['handler_p50']:.2f} ms, p99 {big['handler_p99']:.2f} ms")  # fmt: skip
    print(f"of control -> ack, recording the control as routed (the hub's registry) before sending it: p50 {big['routed_p50']:.2f} ms, "
          f"p99 {big['routed_p99']:.2f} ms, at most {big['routed_max']:.0f} ms")  # fmt: skip
    print(f"the hub's own part of control -> ack (its handler's start to the frame carrying the control taken for the runner's "
          f"stream, plus the frame carrying the ack read to the handler's return): p50 {big['hub_p50']:.2f} ms, p99 {big['hub_p99']:.2f} ms "
          f"(out {big['out_p50']:.2f} / {big['out_p99']:.2f}, back {big['back_p50']:.2f} / {big['back_p99']:.2f}); "
          f"one run alone {base['hub_p50']:.2f} / {base['hub_p99']:.2f} ms")  # fmt: skip
    sl = big["slices"]
    print(f"the hub's event loop ran {sl['callbacks']:,} callbacks during the load; {sl['over_1ms']} took over 1 ms of wall time, "
          f"their CPU p99 {sl['over_1ms_cpu_p99']:.1f} ms, the longest {sl['cpu_max']:.1f} ms of CPU ({sl['wall_max']:.0f} ms of wall), "
          f"{sl['over_5ms_cpu']} over 5 ms of CPU; the longest by what ran: {'; '.join(sl['top'])}")  # fmt: skip
    print(f"ingest: {big['ingest_eps_per_hub_cpu_s']:,.0f} events stored and served per second of the hub process's CPU")
    print(f"the hub process's garbage collector during the load: {big['gc']}")
    print("  by generation (collections, CPU ms in all, longest CPU ms, longest wall ms; unreachable objects freed since the start): "
          + "; ".join(f"gen {g}: {v[0]:.0f}, {v[1]:.0f}, {v[2]:.1f}, {v[3]:.1f}; {v[4]:,.0f}" for g, v in big["gc_by_gen"].items()))  # fmt: skip
    print("  objects the collector tracks at the load's end, by generation (not frozen): "
          + "; ".join(f"gen {g}: {c['count']:,} ({', '.join(f'{k} {n:,}' for k, n in c['top'])})" for g, c in big["census"].items()))  # fmt: skip
    print(f"the hub's event loop woke a 10 ms timer late by {big['loop_lag_p99']:.1f} ms at p99, {big['loop_lag_max']:.0f} ms at most "
          f"(one run alone: {base['loop_lag_p99']:.1f} / {base['loop_lag_max']:.0f} ms)")  # fmt: skip
    if big["commits"]:
        n, total, longest = big["commits"]
        print(f"group commits during the load: {n}, {total / max(n, 1) * 1000:.0f} ms each on average, the longest {longest * 1000:.0f} ms")
    print(json.dumps({"base": base, "fleet": big}))
    print(f"samples: {big['events_measured']:,} events from 50 watched runs, {big['acks_measured']} controls "
          f"(baseline {base['events_measured']}, {base['acks_measured']})")  # fmt: skip


if __name__ == "__main__":
    _take_cores()
    if len(sys.argv) > 1 and sys.argv[1] == "--fleet":
        a = sys.argv[2:]
        into = os.environ.get("BENCH_FLEET_PROFILE")  # cProfile each simulator process into INTO.<prefix>
        if into:
            import cProfile

            cProfile.run("asyncio.run(fleet(a[0], a[1], int(a[2]), float(a[3]), float(a[4]), a[5]))", f"{into}.{a[1]}")
        else:
            asyncio.run(fleet(a[0], a[1], int(a[2]), float(a[3]), float(a[4]), a[5]))
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "--controls":
        a = sys.argv[2:]
        print(json.dumps({"acks_ms": asyncio.run(controls(a[0], a[4:], float(a[1]), float(a[2]), float(a[3])))}), flush=True)
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "--watch":
        a = sys.argv[2:]
        asyncio.run(watch(a[0], a[3:], int(a[1]), float(a[2])))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--procs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--quick", action="store_true", help="200 runs, 5 s")
    parser.add_argument(
        "--shared-channel", action="store_true", help="the runs of one simulator process share one connection (cheaper simulator)"
    )
    parser.add_argument(
        "--shared-stream",
        action="store_true",
        help="the runs of one simulator process share one Hub.ConnectShared stream (HubMux), a lane per run",
    )
    parser.add_argument(
        "--runners",
        action="store_true",
        help="each simulated run is a real Runner(hub=...) (as users run it: one shared stream per process, the run's own control loop)",
    )
    parser.add_argument(
        "--controls-here",
        action="store_true",
        help="send the controls from the hub's own process and loop (as this bench did first) instead of a process of their own",
    )
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=0.0,
        help="the hub process's sys.setswitchinterval (seconds; Python's default 0.005): how long its event loop may wait for the GIL a worker thread (the group commit) holds",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="the hub's process on a core of its own, the simulators, watcher and sender on the others (as when the runs are on other machines)",
    )
    parser.add_argument(
        "--sim-nice",
        type=int,
        default=0,
        help="run the simulator processes at this niceness (e.g. 10): on a machine with fewer cores than the "
        "fleet needs, the hub then gets a core first, as where the runs are on other machines",
    )
    parser.add_argument("--profile", default="", help="cProfile the hub process during the fleet's load into this file")
    parser.add_argument("--serve-gc", action="store_true", help="goldfive serve's gc tuning from the start (every phase)")
    parser.add_argument("--gen0", type=int, default=0, help="with --serve-gc: this young-generation threshold instead of serve's")
    parser.add_argument("--gc-tuned", action="store_true", help="then the same fleet again after goldfive serve's gc tuning")
    ns = parser.parse_args()
    if ns.quick:
        ns.runs, ns.seconds = min(ns.runs, 200), 5.0
    asyncio.run(main(ns))
