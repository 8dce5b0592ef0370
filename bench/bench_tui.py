"""TUI under load, headless (Textual's test driver): ``python bench/bench_tui.py``.

Figures:
- key press to ack shown (p50 / p99) while a flood of 2,000 events/s arrives, with the
  same measurement on an idle run as the baseline;
- memory (RSS) after 100,000 events, relative to the app at rest;
- events applied per second while draining a 100,000-event backlog;
- time to draw the event log scrolled into the middle of 100,000 lines vs 100 lines.
Targets (issue 5): p99 <= 50 ms, memory <= 200 MiB.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events  # noqa: E402

from goldfive import events as E  # noqa: E402
from goldfive_tui.app import GoldfiveApp  # noqa: E402
from goldfive_tui.run.screen import RunScreen  # noqa: E402
from tests.tui.scenario import DemoScript  # noqa: E402
from tests.tui.scripted import ScriptedSource  # noqa: E402
from goldfive_tui.widgets.eventlog import EventLog  # noqa: E402

PRESSES = 40
FLOOD_PER_S = 2000
TICK_S = 0.05


def rss_mib() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def make() -> tuple[GoldfiveApp, RunScreen, ScriptedSource, DemoScript]:
    script = DemoScript()
    source = ScriptedSource(
        script.opening(),
        live=True,
        react=lambda m, a: script.control(m, a.result, a.detail),
        clock=script.clock,
    )
    screen = RunScreen(source)
    return GoldfiveApp(screen), screen, source, script


async def press_to_ack(flood: bool) -> list[float]:
    app, screen, source, script = make()
    acked = asyncio.Event()
    original = screen.control._deliver

    async def deliver(msg, kind):  # type: ignore[no-untyped-def]
        await original(msg, kind)  # returns once the ack is on screen (line rewritten, repainted)
        acked.set()

    screen.control._deliver = deliver  # type: ignore[method-assign]
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await source.wait_idle()
        stop = False

        async def flooding() -> None:
            per_tick = int(FLOOD_PER_S * TICK_S)
            n = 0
            while not stop:
                batch = []
                for _ in range(per_tick):
                    script.clock.advance(1)
                    batch.append(E.task_progress(script.session, "draft", detail=f"step {n}"))
                    n += 1
                source.release(batch)
                await asyncio.sleep(TICK_S)

        task = asyncio.create_task(flooding()) if flood else None
        await asyncio.sleep(0.3)
        for _ in range(PRESSES):
            acked.clear()
            # Post the key the way the terminal driver does; pilot.press would also wait for
            # the whole app to go idle, which a flood never lets it do.
            key = events.Key("p", "p")
            key.set_sender(app)
            t0 = time.perf_counter()
            app._driver.send_message(key)  # type: ignore[union-attr]
            await acked.wait()
            latencies.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.03)
        stop = True
        if task:
            await task
    return latencies


async def backlog(n: int) -> tuple[float, float, float]:
    """Returns (events/s applied, RSS growth MiB, ms to draw the log mid-scroll)."""
    app, screen, source, script = make()
    async with app.run_test(size=(120, 40)) as pilot:
        await source.wait_idle()
        await pilot.pause()
        gc.collect()
        before = rss_mib()
        t0 = time.perf_counter()
        done = 0
        while done < n:
            k = min(5000, n - done)
            source.release(E.task_progress(script.session, "draft", detail=f"step {done + i}") for i in range(k))
            await source.wait_idle()
            done += k
        rate = n / (time.perf_counter() - t0)
        screen.repaint()
        await pilot.pause()
        gc.collect()
        grown = rss_mib() - before
        log = app.query_one(EventLog)
        log.scroll_to(y=log.max_scroll_y // 2, animate=False, force=True)
        await pilot.pause()
        t1 = time.perf_counter()
        for _ in range(20):
            for y in range(log.size.height):
                log.render_line(y)
        draw_ms = (time.perf_counter() - t1) * 1000 / 20
    return rate, grown, draw_ms


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def main() -> None:
    idle = await press_to_ack(flood=False)
    flood = await press_to_ack(flood=True)
    print(f"key press -> ack shown, {PRESSES} presses each")
    print(f"  idle run      p50 {statistics.median(idle):6.1f} ms  p99 {pct(idle, 99):6.1f} ms")
    print(
        f"  2,000 ev/s    p50 {statistics.median(flood):6.1f} ms  p99 {pct(flood, 99):6.1f} ms"
        f"  (x{statistics.median(flood) / statistics.median(idle):.2f} / x{pct(flood, 99) / pct(idle, 99):.2f}"
        " of idle; target p99 <= 50 ms)"
    )
    small_rate, _, small_draw = await backlog(100)
    rate, grown, draw = await backlog(100_000)
    print("100,000-event backlog")
    print(f"  applied       {rate:,.0f} events/s")
    print(f"  RSS growth    {grown:6.1f} MiB (target <= 200 MiB)")
    print(f"  draw the log  {draw:6.2f} ms mid-scroll at 100,000 lines vs {small_draw:.2f} ms at 100 (x{draw / small_draw:.2f})")


if __name__ == "__main__":
    asyncio.run(main())
