"""bench/bench_control_plane.py's round trips leave no task pending behind them, not even
when a measurement fails (a pending ``answer_after_end`` or run task was "destroyed but
pending" at the loop's close)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import bench_control_plane as bench  # noqa: E402


def _left() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]


async def test_the_round_trips_end_every_task_they_start() -> None:
    assert len(await bench.control_round_trips(5)) == 5
    assert len(await bench.approve_round_trips(3)) == 3
    await asyncio.sleep(0)
    assert _left() == []


async def test_a_round_trip_that_fails_midway_still_ends_its_run_and_runner() -> None:
    with pytest.raises(TypeError):
        await bench.control_round_trips("five")  # type: ignore[arg-type]  # fails after the run started
    await asyncio.sleep(0)
    assert _left() == []
