"""gRPC transport cost of goldfive's Runs service vs a raw gRPC baseline, in one run on loopback.

Baseline: an empty unary call and a server stream of opaque byte messages as large as the
benchmark's Events, on a bare grpc.aio server. Then: SendControl round trip (a STATUS_QUERY
to a live hosted run, acked by its runner) p50/p99, and Subscribe events/s over a run's
recorded history. Client and server share one event loop in both cases, so ratios compare
like with like. Targets: control p99 <= 2x raw unary p99; Subscribe >= 0.7x raw stream.

    python bench/bench_grpc.py [--calls 2000] [--events 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from goldfive.control import ControlKind, ControlMessage  # noqa: E402
from goldfive.pb.goldfive.v1 import events_pb2  # noqa: E402
from goldfive.remote import RemoteClient, RunHost, start_server  # noqa: E402
from goldfive.remote.host import HostedRun  # noqa: E402
from goldfive.sinks.memory import InMemorySink  # noqa: E402
from tests.remote_fixtures import Gate, gated_factory  # noqa: E402


def _events(n: int) -> list[events_pb2.Event]:
    run_id = uuid.uuid4().hex
    out = []
    for seq in range(n):
        ev = events_pb2.Event(event_id=uuid.uuid4().hex, run_id=run_id, sequence=seq)
        ev.emitted_at.FromMilliseconds(1_700_000_000_000 + seq)
        ev.task_progress.task_id = f"task-{seq % 7}"
        ev.task_progress.fraction = 0.5
        ev.task_progress.detail = f"working on step {seq} of the slide deck about Python"
        out.append(ev)
    return out


def _pct(samples: list[float], p: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


class RawServer:
    """A bare grpc.aio server: an empty unary call and a stream of opaque byte messages."""

    def __init__(self, payloads: list[bytes]) -> None:
        self.payloads = payloads

    async def start(self) -> str:
        async def empty(request: bytes, context: object) -> bytes:
            return b""

        async def stream(request: bytes, context: object):  # type: ignore[no-untyped-def]
            for p in self.payloads:
                yield p

        handler = grpc.method_handlers_generic_handler(
            "bench.Raw",
            {
                "Empty": grpc.unary_unary_rpc_method_handler(empty),
                "Stream": grpc.unary_stream_rpc_method_handler(stream),
            },
        )
        self.server = grpc.aio.server()
        self.server.add_generic_rpc_handlers((handler,))
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        return f"127.0.0.1:{port}"


async def _timed(n: int, call) -> list[float]:  # type: ignore[no-untyped-def]
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        lat.append(time.perf_counter() - t0)
    return lat


async def _rate(stream) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    n = 0
    async for _ in stream:
        n += 1
    return n / (time.perf_counter() - t0)


async def measure(calls: int, rounds: int, events: list[events_pb2.Event]) -> dict[str, list]:
    """Raw and goldfive measurements interleaved round by round, so load from other processes
    hits both alike."""
    raw = RawServer([ev.SerializeToString() for ev in events])
    raw_addr = await raw.start()
    out: dict[str, list] = {"raw_lat": [], "ctl_lat": [], "raw_rate": [], "sub_rate": []}
    with tempfile.TemporaryDirectory() as tmp:
        gate = Gate()
        host = RunHost(Path(tmp) / "runs.sqlite")
        server = await start_server(host, listen="127.0.0.1:0")
        host.start_run(gated_factory(gate), "bench", run_id="live")
        await gate.entered.wait()
        # A run with a long history, served from memory like a live run's.
        recorded = HostedRun("history")
        recorded.memory = InMemorySink()
        for ev in events:
            await recorded.memory.emit(ev)
        await recorded.memory.close()
        host._runs["history"] = recorded
        try:
            async with grpc.aio.insecure_channel(raw_addr) as channel, RemoteClient(server.address) as client:
                unary = channel.unary_unary("/bench.Raw/Empty")
                raw_stream = channel.unary_stream("/bench.Raw/Stream")

                async def control() -> None:
                    await client.send_control("live", ControlMessage(ControlKind.STATUS_QUERY))

                await _timed(200, lambda: unary(b""))  # warm up both
                await _timed(200, control)
                per_round = max(calls // rounds, 1)
                for _ in range(rounds):
                    out["raw_lat"] += await _timed(per_round, lambda: unary(b""))
                    out["ctl_lat"] += await _timed(per_round, control)
                    out["raw_rate"].append(await _rate(raw_stream(b"")))
                    out["sub_rate"].append(await _rate(client.subscribe("history")))
        finally:
            gate.open()
            await server.stop(None)
            await raw.server.stop(None)
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    events = _events(args.events)
    size = statistics.mean(ev.ByteSize() for ev in events)
    m = await measure(args.calls, args.rounds, events)
    raw_lat, ctl_lat = m["raw_lat"], m["ctl_lat"]
    # Streams: the best round of each (the least disturbed by other load on the machine).
    raw_rate, sub_rate = max(m["raw_rate"]), max(m["sub_rate"])
    ms = 1000.0
    print(f"loopback, one event loop, {args.rounds} interleaved rounds; {args.calls} calls, "
          f"streams of {args.events} events of {size:.0f} bytes")
    print(f"raw unary (empty)     p50 {_pct(raw_lat, 50) * ms:7.3f} ms  p99 {_pct(raw_lat, 99) * ms:7.3f} ms")
    print(f"SendControl round trip p50 {_pct(ctl_lat, 50) * ms:7.3f} ms  p99 {_pct(ctl_lat, 99) * ms:7.3f} ms")
    p99_ratio = _pct(ctl_lat, 99) / _pct(raw_lat, 99)
    p50_ratio = _pct(ctl_lat, 50) / _pct(raw_lat, 50)
    print(f"  ratio p50 x{p50_ratio:.2f}, p99 x{p99_ratio:.2f} (target p99 <= x2.0: {'met' if p99_ratio <= 2 else 'MISSED'})")
    rounds = ", ".join(f"{r:,.0f}/{s:,.0f}" for r, s in zip(m["raw_rate"], m["sub_rate"]))
    print(f"raw stream            {raw_rate:10,.0f} msg/s   (per round raw/Subscribe: {rounds})")
    print(f"Subscribe             {sub_rate:10,.0f} events/s")
    ratio = sub_rate / raw_rate
    print(f"  ratio x{ratio:.2f} (target >= x0.70: {'met' if ratio >= 0.7 else 'MISSED'})")


if __name__ == "__main__":
    asyncio.run(main())
