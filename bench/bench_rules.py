"""Checking a tool call against 1,000 approval rules, against the bare tool call, in one run.

    python bench/bench_rules.py [--calls N] [--passes N]

(a) bare: a UserTool bound to a run (no approval), awaited with its arguments: what a call
    costs when nothing is checked.
(b) spread: 1,000 rules over 100 tools (10 each, path / glob / range / exact matchers); the
    call is checked against its tool's rules and matches none (the slowest outcome: every
    rule of the tool is tried).
(c) one tool: all 1,000 rules name the same tool; the call matches none (the worst case).
(d) desk: (b) through the run's ApprovalDesk (run rules, then machine rules; machine rules off).
Each figure is the median of --passes passes after a warm-up pass, in microseconds per call.
Target: (b) at most 20 µs per call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any, Callable

from goldfive.approvals import Matcher, Rule, RuleBook
from goldfive.approvals.desk import ApprovalDesk

TARGET_US = 20.0
CALL = {"path": "src/pkg/../../etc/passwd", "pattern": "*.py", "depth": 7, "mode": "fast"}


def _rule(tool: str, i: int) -> Rule:
    return Rule(tool, {
        "path": Matcher("path_under", f"src/area{i}"),
        "pattern": Matcher("glob", f"*.t{i}"),
        "depth": Matcher("range", low=0, high=5),
        "mode": Matcher("exact", f"m{i}"),
    })  # fmt: skip


def unindexed_book() -> RuleBook:
    rules = [Rule("tool0", {"path": Matcher("path_under", f"src/area{i}"), "pattern": Matcher("glob", f"*.t{i}"),
                            "depth": Matcher("range", low=0, high=5), "mode": Matcher("any")}) for i in range(1000)]  # fmt: skip
    return RuleBook(rules=rules)


def spread_book() -> RuleBook:
    return RuleBook(rules=[_rule(f"tool{t}", i) for t in range(100) for i in range(10)])


def one_tool_book() -> RuleBook:
    return RuleBook(rules=[_rule("tool0", i) for i in range(1000)])


def _per_call_us(fn: Callable[[], Any], calls: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t0) / calls / 1000


def _median(fn: Callable[[], Any], calls: int, passes: int) -> float:
    _per_call_us(fn, calls)  # warm-up
    return statistics.median(_per_call_us(fn, calls) for _ in range(passes))


async def _bare_us(calls: int, passes: int) -> float:
    from goldfive.adapters.callable import CallableAdapter
    from goldfive.run.context import RunContext
    from goldfive.run.user_tools import UserTool
    from goldfive.types import Session

    def find(path: str, pattern: str, depth: int, mode: str) -> dict[str, Any]:
        return {"ok": True}

    tool = UserTool(find)
    ctx = RunContext(Session(run_id="bench"), sinks=[], steerer=None, planner=None, adapter=CallableAdapter(lambda *a: None, tools=[tool]))
    spec = tool.bind(ctx, "t1")

    async def one_pass() -> float:
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            await spec.handler(**CALL)
        return (time.perf_counter_ns() - t0) / calls / 1000

    await one_pass()
    return statistics.median([await one_pass() for _ in range(passes)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--passes", type=int, default=7)
    ns = ap.parse_args()
    spread, one, flat = spread_book(), one_tool_book(), unindexed_book()
    desk = ApprovalDesk(run_rules=spread)
    assert len(spread) == len(one) == 1000
    assert spread.match("tool7", CALL) is None and one.match("tool0", CALL) is None
    bare = asyncio.run(_bare_us(ns.calls, ns.passes))
    figures = {
        "(a) bare tool call": bare,
        "(b) 1,000 rules, 100 tools": _median(lambda: spread.match("tool7", CALL), ns.calls, ns.passes),
        "(c) 1,000 rules, one tool": _median(lambda: one.match("tool0", CALL), max(ns.calls // 50, 100), ns.passes),
        "(d) (b) through the run's desk": _median(lambda: desk.match("tool7", CALL), ns.calls, ns.passes),
        "(e) 1,000 unindexed rules": _median(lambda: flat.match("tool0", CALL), max(ns.calls // 50, 100), ns.passes),
    }
    print(f"median of {ns.passes} passes after a warm-up, µs per call")
    for name, us in figures.items():
        print(f"  {name:<32} {us:10.2f} µs   {us / bare:8.2f}x bare")
    verdict = "OK" if figures["(b) 1,000 rules, 100 tools"] <= TARGET_US else "OVER"
    print(f"target: (b) at most {TARGET_US:g} µs per call: {verdict}")


if __name__ == "__main__":
    main()
