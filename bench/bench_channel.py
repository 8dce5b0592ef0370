"""ControlChannel round-trip latency against the raw asyncio.Queue floor, in one run.

    python bench/bench_channel.py [--iterations N] [--warmup N]

(a) floor: task A puts a request on q1, task B gets it and puts a reply on q2, A awaits it.
(b) channel: the sender builds and sends a ControlMessage and awaits the next ack from an
    ``acks()`` iterator; a runner task does ``receive()`` then ``ack()``.
Both are two queue hops and two task switches per iteration, so the difference is the
channel's own cost. Target: channel p99 within 3x of the floor's p99.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from typing import Awaitable, Callable

from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage

TARGET_P99_RATIO = 3.0


def _percentile(sorted_ns: list[int], q: float) -> float:
    idx = min(len(sorted_ns) - 1, max(0, round(q * (len(sorted_ns) - 1))))
    return sorted_ns[idx] / 1_000  # microseconds


async def _floor(n: int) -> list[int]:
    q1: asyncio.Queue[int] = asyncio.Queue()
    q2: asyncio.Queue[int] = asyncio.Queue()

    async def echo() -> None:
        while (item := await q1.get()) >= 0:
            q2.put_nowait(item)

    peer = asyncio.create_task(echo())
    samples: list[int] = []
    clock = time.perf_counter_ns
    for i in range(n):
        t0 = clock()
        q1.put_nowait(i)
        await q2.get()
        samples.append(clock() - t0)
    q1.put_nowait(-1)
    await peer
    return samples


async def _channel(n: int) -> list[int]:
    ch = ControlChannel()

    async def runner() -> None:
        while (msg := await ch.receive()) is not None:
            await ch.ack(ControlAck(msg.id, AckResult.SUCCESS))

    peer = asyncio.create_task(runner())
    acks = ch.acks()
    samples: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t0 = clock()
        msg = ControlMessage(ControlKind.PAUSE)
        await ch.send(msg)
        ack = await anext(acks)
        samples.append(clock() - t0)
        if ack.control_id != msg.id:
            raise AssertionError(f"ack for {ack.control_id}, expected {msg.id}")
    ch.close()
    await peer
    async for _ in acks:  # drains to the end-of-stream sentinel
        pass
    return samples


async def _measure(fn: Callable[[int], Awaitable[list[int]]], n: int, warmup: int) -> list[int]:
    await fn(warmup)
    gc.collect()
    gc.disable()  # a collection inside one sample would measure the collector, not the channel
    try:
        return sorted(await fn(n))
    finally:
        gc.enable()


def _row(name: str, s: list[int], floor: list[int] | None) -> str:
    p50, p99, mean = _percentile(s, 0.50), _percentile(s, 0.99), statistics.fmean(s) / 1_000
    text = f"{name:<28} p50 {p50:7.2f} us   p99 {p99:7.2f} us   mean {mean:7.2f} us"
    if floor is not None:
        text += f"   x{p50 / _percentile(floor, 0.50):.2f} p50   x{p99 / _percentile(floor, 0.99):.2f} p99"
    return text


async def main(n: int, warmup: int, rounds: int) -> int:
    floor: list[int] = []
    chan: list[int] = []
    # Interleave rounds so both see the same machine load (the CPUs are shared).
    for _ in range(rounds):
        floor += await _measure(_floor, n // rounds, warmup)
        chan += await _measure(_channel, n // rounds, warmup)
    floor.sort()
    chan.sort()
    print(f"{len(floor)} iterations each, {rounds} interleaved rounds, {warmup} warm-up per round")
    print(_row("asyncio.Queue round trip", floor, None))
    print(_row("ControlChannel round trip", chan, floor))
    ratio = _percentile(chan, 0.99) / _percentile(floor, 0.99)
    verdict = "met" if ratio <= TARGET_P99_RATIO else "MISSED"
    print(f"target: channel p99 <= {TARGET_P99_RATIO:.0f}x floor p99 -> x{ratio:.2f}, {verdict}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=20_000)
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=4)
    ns = parser.parse_args()
    raise SystemExit(asyncio.run(main(ns.iterations, ns.warmup, ns.rounds)))
