"""Batching on the hub's wire: ``python bench/bench_hub_ingest.py [--passes 3] [--events 1000000]``.

Every figure is a rate (events/s) against a baseline measured in the same run, a warm-up then
the median of ``--passes`` passes. The hub is a real ``goldfive serve`` subprocess on 127.0.0.1.

1. Ingest. Baseline: goldfive v1's raw gRPC stream of single events
   (``GoldfiveIngress.StreamEvents``, one message per event, as GRPCSink sends them) into a
   hub's ingest, stored. Against it: the same events in ``EventBatch`` messages of 1,000 on
   one stream into the same storage path (the hub process is this bench's own small server
   here: the batched runner stream, ``Hub.Connect``, is hub-connect's and measured there);
   and the bare transport of both shapes with nothing stored, to show where the time goes.
   Then the same against a real ``goldfive serve --ingest`` (the hub as people run it): the
   raw stream of single events (``StreamEvents``, stored as a pushed run) as the baseline,
   against a runner's ``Hub.Connect`` stream (``RunnerHello``, then ``EventBatch`` messages
   of 1,000), timed from the hello to the hub's ``confirmed_sequence`` for the last event
   (stored and committed: what a runner waits for). Wall time and, for every row, the hub
   process's CPU time (from /proc) are printed, since the machine is shared.
2. Reading. A recording of ``--events`` events (default 1,000,000) in the hub's database:
   ``Runs.Subscribe`` (one message per event, the baseline) against ``Runs.SubscribeBatches``,
   counted by a client; then ``goldfive ctl tail RUN > /dev/null`` whole, in seconds (issue
   10's target: at most 10 s for 1M events).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BATCH = 1000


def events(run_id: str, total: int) -> Iterator[Any]:
    """A run of ``total`` events: started, progress reports over 100 tasks, completed."""
    from goldfive.pb.goldfive.v1 import events_pb2 as pb

    t0 = 1_700_000_000_000
    for seq in range(total):
        if seq == 0:
            e = pb.Event(run_started=pb.RunStarted(goal_summary="a long run"))
        elif seq == total - 1:
            e = pb.Event(run_completed=pb.RunCompleted(outcome_summary="done"))
        else:
            e = pb.Event(task_progress=pb.TaskProgress(task_id=f"t{seq % 100}", fraction=0.5, detail=f"step {seq}"))
        e.event_id, e.run_id, e.sequence = f"{run_id}-{seq}", run_id, seq
        e.emitted_at.FromMilliseconds(t0 + seq)
        yield e


def build_db(db: Path, run_id: str, total: int) -> None:
    """The recording, written by direct inserts in the sink's own schema (fast)."""
    from goldfive.sinks import SQLitePersistenceSink

    SQLitePersistenceSink(db)._conn.close()
    conn = sqlite3.connect(db)
    rows = []
    for e in events(run_id, total):
        rows.append((e.run_id, e.sequence, e.event_id, e.WhichOneof("payload"), e.emitted_at.ToMilliseconds(), e.SerializeToString()))
        if len(rows) == 50_000:
            conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", rows)
            rows.clear()
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()


def free_addr() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


class Hub:
    """``goldfive serve`` (or this file's ``--child-hub`` server) in a subprocess."""

    def __init__(self, args: list[str], data: Path) -> None:
        self.addr = free_addr()
        env = dict(os.environ, GOLDFIVE_DATA_DIR=str(data))
        self.proc = subprocess.Popen(
            [sys.executable, *args, "--listen", self.addr],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=ROOT, env=env,
        )  # fmt: skip
        assert self.proc.stderr is not None
        first = self.proc.stderr.readline()
        if "listening" not in first:
            raise SystemExit(f"the hub did not start: {first}{self.proc.stderr.read()}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


# -- 1. ingest ------------------------------------------------------------------------------


async def push_single(addr: str, run_id: str, n: int) -> float:
    import grpc

    from goldfive.pb.goldfive.v1 import service_pb2_grpc

    evs = list(events(run_id, n))
    async with grpc.aio.insecure_channel(addr) as ch:
        stub = service_pb2_grpc.GoldfiveIngressStub(ch)
        t = time.perf_counter()
        resp = await stub.StreamEvents(iter(evs))
        s = time.perf_counter() - t
    assert resp.received == n and not resp.error, resp
    return s


async def push_batches(addr: str, run_id: str, n: int, method: str) -> float:
    import grpc

    from goldfive.pb.goldfive.v1 import service_pb2

    evs = list(events(run_id, n))
    batches = [service_pb2.EventBatch(events=evs[i : i + BATCH]) for i in range(0, n, BATCH)]
    async with grpc.aio.insecure_channel(addr) as ch:
        call = ch.stream_unary(method, request_serializer=service_pb2.EventBatch.SerializeToString,
                               response_deserializer=service_pb2.StreamEventsResponse.FromString)  # fmt: skip
        t = time.perf_counter()
        resp = await call(iter(batches))
        s = time.perf_counter() - t
    assert resp.received == n and not resp.error, resp
    return s


async def child_hub(listen: str, db: str, store: bool) -> None:
    """A server with GoldfiveIngress (single events) and a batched ingest of EventBatch
    streams; with ``store`` both feed the hub's own ingest (HostIngest: state, live stream,
    SQLite), without it both only count (the bare transport)."""
    import grpc

    from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
    from goldfive.remote.host import RunHost
    from goldfive.remote.ingest import HostIngest, IngressService

    host = RunHost(db)

    class Count:
        async def emit(self, event: Any) -> None:
            return None

        async def close(self) -> None:
            return None

    sink: Any = HostIngest(host) if store else Count()

    async def batched(requests: Any, context: Any) -> Any:
        received = 0
        async for batch in requests:
            for ev in batch.events:
                await sink.emit(ev)
            received += len(batch.events)
        return service_pb2.StreamEventsResponse(received=received)

    server = grpc.aio.server()
    service_pb2_grpc.add_GoldfiveIngressServicer_to_server(IngressService(sink), server)
    handler = grpc.stream_unary_rpc_method_handler(
        batched, request_deserializer=service_pb2.EventBatch.FromString,
        response_serializer=service_pb2.StreamEventsResponse.SerializeToString,
    )  # fmt: skip
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Ingest", {"StreamBatches": handler})])
    server.add_insecure_port(listen)
    await server.start()
    print("listening", file=sys.stderr, flush=True)
    await server.wait_for_termination()


async def push_connect(addr: str, run_id: str, n: int) -> float:
    """A runner's Hub.Connect stream: hello, every batch, then wait for the hub to confirm
    the last event (the hub stores and commits before it confirms)."""
    import grpc

    from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc

    evs = list(events(run_id, n))
    msgs = [service_pb2.RunnerMessage(events=service_pb2.EventBatch(events=evs[i : i + BATCH])) for i in range(0, n, BATCH)]
    hello = service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id=run_id, host="bench", pid=os.getpid()))
    async with grpc.aio.insecure_channel(addr) as ch:
        call = service_pb2_grpc.HubStub(ch).Connect()
        t = time.perf_counter()
        await call.write(hello)
        first = await call.read()
        assert first.WhichOneof("body") == "welcome", first

        async def write() -> None:
            for m in msgs:
                await call.write(m)

        writer = asyncio.ensure_future(write())
        while True:
            msg = await call.read()
            assert msg is not grpc.aio.EOF, "the hub ended the stream"
            if msg.WhichOneof("body") == "confirmed_sequence" and msg.confirmed_sequence == n - 1:
                break
        s = time.perf_counter() - t
        await writer
        await call.done_writing()
        call.cancel()
    return s


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def median_with_cpu(fn: Any, passes: int, pid: int) -> tuple[float, float]:
    """Median wall seconds of ``fn`` and median CPU seconds the hub ``pid`` spent in it."""
    fn()  # warm-up
    walls, cpus = [], []
    for _ in range(passes):
        c = cpu_s(pid)
        walls.append(fn())
        cpus.append(cpu_s(pid) - c)
    return statistics.median(walls), statistics.median(cpus)


# -- 2. reading -----------------------------------------------------------------------------


async def read(addr: str, run_id: str, batched: bool) -> tuple[float, int]:
    from goldfive.link.client import RemoteClient

    async with RemoteClient(addr) as client:
        t = time.perf_counter()
        if batched:
            n = sum([len(b) async for b in client.subscribe_batches(run_id)])
        else:
            n = sum([1 async for _ in client.subscribe(run_id)])
        return time.perf_counter() - t, n


def median_of(fn: Any, passes: int) -> float:
    fn()  # warm-up
    return statistics.median(fn() for _ in range(passes))


def rate_line(label: str, n: int, s: float, base: float | None = None) -> str:
    r = n / s
    ratio = f"  x{r / base:6.1f} the baseline" if base else "  (baseline)"
    return f"  {label:<52} {r:>11,.0f} events/s{ratio}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--events", type=int, default=1_000_000, help="events in the recording that is read back")
    ap.add_argument("--ingest-events", type=int, default=100_000, help="events pushed per ingest pass")
    ap.add_argument("--only", choices=["ingest", "read"], help="measure only one part")
    ap.add_argument("--child-hub", nargs=2, metavar=("DB", "STORE"))
    ap.add_argument("--listen")
    args = ap.parse_args()
    if args.child_hub:
        asyncio.run(child_hub(args.listen, args.child_hub[0], args.child_hub[1] == "store"))
        return
    n, total = args.ingest_events, args.events
    print(f"median of {args.passes} passes after a warm-up; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        print(f"1. ingest, {n:,} events per pass")
        for store in ("bare", "store") if args.only != "read" else ():
            hub = Hub([__file__, "--child-hub", str(d / f"ingest-{store}.sqlite"), store], d)
            try:
                k = iter(range(10**6))
                pid = hub.proc.pid
                single, single_cpu = median_with_cpu(lambda: asyncio.run(push_single(hub.addr, f"s{next(k)}", n)), args.passes, pid)
                batch, batch_cpu = median_with_cpu(
                    lambda: asyncio.run(push_batches(hub.addr, f"b{next(k)}", n, "/bench.Ingest/StreamBatches")), args.passes, pid
                )
            finally:
                hub.stop()
            what = "stored by the hub's ingest" if store == "store" else "transport only, nothing stored"
            print(rate_line(f"single events, StreamEvents ({what})", n, single) + f"   hub CPU {n / single_cpu:>9,.0f} events/s")
            print(rate_line(f"batches of {BATCH:,} ({what})", n, batch, n / single) + f"   hub CPU {n / batch_cpu:>9,.0f} events/s")
            if store == "store":
                print(json.dumps({"ingest_events": n, "store_single_s": single, "store_single_cpu_s": single_cpu,
                                  "store_batches_s": batch, "store_batches_cpu_s": batch_cpu}))  # fmt: skip
        if args.only != "read":
            hub = Hub(["-m", "goldfive.cli", "serve", "--ingest", "--db", str(d / "hub.sqlite"), "--no-resume"], d)
            try:
                k = iter(range(10**6))
                pid = hub.proc.pid
                single, single_cpu = median_with_cpu(lambda: asyncio.run(push_single(hub.addr, f"hs{next(k)}", n)), args.passes, pid)
                conn, conn_cpu = median_with_cpu(lambda: asyncio.run(push_connect(hub.addr, f"hc{next(k)}", n)), args.passes, pid)
            finally:
                hub.stop()
            print("   the hub (goldfive serve --ingest), stored; hub CPU time beside")
            print(rate_line("single events, StreamEvents (pushed run)", n, single) + f"   hub CPU {n / single_cpu:>9,.0f} events/s")
            print(
                rate_line(f"Hub.Connect, batches of {BATCH:,}, until confirmed", n, conn, n / single)
                + f"   hub CPU {n / conn_cpu:>9,.0f} events/s"
            )
            print(json.dumps({"ingest_events": n, "hub_single_s": single, "hub_single_cpu_s": single_cpu,
                              "hub_connect_s": conn, "hub_connect_cpu_s": conn_cpu}))  # fmt: skip
        if args.only == "ingest":
            return
        t = time.perf_counter()
        db = d / "runs.sqlite"
        build_db(db, "big", total)
        print(f"2. reading a recording of {total:,} events (built in {time.perf_counter() - t:.0f} s)")
        hub = Hub(["-m", "goldfive.cli", "serve", "--db", str(db), "--no-resume"], d)
        try:
            sub_s = median_of(lambda: asyncio.run(read(hub.addr, "big", False))[0], args.passes)
            bat_s = median_of(lambda: asyncio.run(read(hub.addr, "big", True))[0], args.passes)

            def tail() -> float:
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "goldfive.cli", "ctl", hub.addr, "tail", "big"],
                               stdout=subprocess.DEVNULL, check=True, cwd=ROOT)  # fmt: skip
                return time.perf_counter() - t

            tail_s = median_of(tail, args.passes)
        finally:
            hub.stop()
        print(rate_line("Runs.Subscribe, one message per event", total, sub_s))
        print(rate_line(f"Runs.SubscribeBatches (up to {BATCH:,} per batch)", total, bat_s, total / sub_s))
        print(rate_line("goldfive ctl tail RUN > /dev/null", total, tail_s, total / sub_s) + f"   {tail_s:.1f} s whole")
        print(json.dumps({"ingest_events": n, "events": total, "subscribe_s": sub_s, "batches_s": bat_s, "ctl_tail_s": tail_s}))


if __name__ == "__main__":
    main()
