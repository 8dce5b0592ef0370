"""What usage recording, the watchdog and the OTel export cost, each as a ratio to the same run
without it, measured in the same process with the configurations interleaved.

Run: python bench/bench_cost.py [--tasks 300] [--rounds 7] [--model-ms 0]

Each task's agent makes CALLS model calls and, after each, a tool call (a UserTool, recorded as an
agent_step) and a progress note: a task is about 4 + 3 * CALLS events. The model call itself takes
``--model-ms`` (0: goldfive's overhead alone, the worst case for a ratio; real model calls take
hundreds of milliseconds). Configurations:

  base      usage not reported, watchdog off, no OTel sink      (InMemorySink in every row)
  usage     every model call reported (priced, usage_recorded)
  watchdog  the watchdog on (every event observed)
  otel      OTelSink: BatchSpanProcessor + OTLP/HTTP exporter to a receiver on loopback
  all       the three together

Printed: microseconds per task (median of the rounds), the ratio to base, and the cost per event
of usage (per usage event) and of the watchdog (per event of the run). The target is all <= 1.10
per task for a real agent; with --model-ms 0 the ratio is goldfive's bookkeeping against a no-op.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from goldfive.adapters.callable import CallableAdapter  # noqa: E402
from goldfive.executors.sequential import SequentialExecutor  # noqa: E402
from goldfive.planners.static import StaticPlanner  # noqa: E402
from goldfive.run.config import RuntimeConfig  # noqa: E402
from goldfive.run.user_tools import UserTool  # noqa: E402
from goldfive.runner import Runner  # noqa: E402
from goldfive.sinks import InMemorySink  # noqa: E402
from goldfive.types import Plan, Session, Task, TaskEdge  # noqa: E402
from goldfive.usage import ModelUsage, report_usage  # noqa: E402
from goldfive.watchdog import WatchdogConfig  # noqa: E402

CALLS = 3
CONFIGS = ("base", "usage", "watchdog", "otel", "all")


def lookup(key: str) -> dict[str, Any]:
    """Look a key up."""
    return {"value": key.upper()}


def plan(n: int) -> Plan:
    tasks = [Task(f"t{i}", f"task {i}") for i in range(n)]
    return Plan(tasks, [TaskEdge(f"t{i}", f"t{i + 1}") for i in range(n - 1)], id="p")


def make_agent(report: bool, model_s: float) -> Any:
    usage = ModelUsage("gpt-4o-mini", 1200, 80, 400, source="bench")

    async def agent(task: Task, session: Session, tools: dict[str, Any]) -> str:
        for i in range(CALLS):
            if model_s:
                await asyncio.sleep(model_s)
            if report:
                await report_usage(usage, session=session, task_id=task.id)
            await tools["lookup"](key=f"{task.id}-{i}")
            await tools["report_task_progress"](detail=f"step {i} of {task.id}")
        return "done"

    return agent


async def one_run(config: str, n: int, model_s: float, endpoint: str) -> tuple[float, int, int]:
    report = config in ("usage", "all")
    watch = WatchdogConfig(enabled=config in ("watchdog", "all"))
    sink = InMemorySink()
    sinks: list[Any] = [sink]
    otel = None
    if config in ("otel", "all"):
        from goldfive.otel import OTelSink
        from goldfive.settings import OTelSettings

        otel = OTelSink(settings=OTelSettings(endpoint=endpoint))
        sinks.append(otel)
    adapter = CallableAdapter(make_agent(report, model_s), tools=[UserTool(lookup)])
    runner = Runner(agent=adapter, planner=StaticPlanner(plan(n)), executor=SequentialExecutor(), sinks=sinks,
                    config=RuntimeConfig(watchdog=watch))  # fmt: skip
    gc.collect()
    began = time.perf_counter()
    out = await runner.run("bench")
    took = time.perf_counter() - began
    await runner.close()
    if otel is not None:
        await otel.shutdown()  # the export finished, outside the timed part (it runs in its own thread)
    assert out.success, out.reason
    usage_events = sum(1 for e in sink.events if e.WhichOneof("payload") == "usage_recorded")
    return took, len(sink.events), usage_events


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--model-ms", type=float, default=0.0)
    args = ap.parse_args()
    from tests.otel.receiver import HttpReceiver

    times: dict[str, list[float]] = {c: [] for c in CONFIGS}
    counts: dict[str, tuple[int, int]] = {}
    with HttpReceiver() as rx:
        await one_run("all", 20, 0, rx.endpoint)  # warm up imports and caches
        for _ in range(args.rounds):
            for config in CONFIGS:  # interleaved: drift on the machine touches every row alike
                took, events, usage = await one_run(config, args.tasks, args.model_ms / 1000, rx.endpoint)
                times[config].append(took)
                counts[config] = (events, usage)
        spans = len(rx.spans)
    per_task = {c: statistics.median(v) / args.tasks * 1e6 for c, v in times.items()}
    base = per_task["base"]
    print(f"{args.tasks} tasks x {args.rounds} rounds, {CALLS} model calls per task, model call {args.model_ms:g} ms; "
          f"events per run: base {counts['base'][0]}, all {counts['all'][0]}; spans exported: {spans}")  # fmt: skip
    print(f"{'config':<10} {'us/task':>10} {'ratio':>7}")
    for c in CONFIGS:
        print(f"{c:<10} {per_task[c]:>10.1f} {per_task[c] / base:>7.3f}")
    usage_events = counts["usage"][1] / args.tasks
    run_events = counts["watchdog"][0] / args.tasks
    print(f"usage: {(per_task['usage'] - base) / usage_events:.1f} us per model call recorded (event, pricing, totals)")
    print(f"watchdog: {(per_task['watchdog'] - base) / run_events:.2f} us per event observed")
    print(f"otel: {per_task['otel'] - base:.1f} us per task ({counts['otel'][0] / args.tasks:.0f} events, spans built on the loop)")
    print(f"all three: {per_task['all'] / base:.3f} x the run without them (target <= 1.10 per task for a real agent)")


if __name__ == "__main__":
    asyncio.run(main())
