"""The runner's cost per event on a shared stream, in Python function calls (issue 27 part 2):
what a process running many connected runs spends to hand each event to the hub, which the
machine's load does not change. The hub runs in a process of its own, so only the runner's
end is counted; the figure is a difference of two sizes, so set-up and the confirmations
(one per run per group commit, not per event) mostly cancel out."""

from __future__ import annotations

import asyncio
import cProfile
import pstats
from pathlib import Path

from goldfive import events
from goldfive.control import ControlChannel
from goldfive.link import HubLink
from goldfive.link.mux import HubMux
from goldfive.types import Session
from tests.hub.conftest import free_port, read_until, spawn, until

#: Calls per event (with building the event and the test's own loop): the run's link appends
#: it and marks its lane, the mux pulls it into a frame. 23.4 then; 72.7 when each event woke the
#: link's task, which built a message for it and queued it as a part of its own. Holding the
#: event serialized (goldfive.link.raw) adds about 1.2 calls (its serialization and size, once)
#: and takes away the copy into each frame, which was C work inside one call: 20.9 -> 22.1 in
#: the same count on one machine, with 22-25 µs of CPU per event instead of 30-33.
BUDGET = 26
RUNS = 20


async def _emit_rounds(links: list[tuple[Session, HubLink]], rounds: int) -> int:
    prof = cProfile.Profile()
    prof.enable()
    try:
        for step in range(rounds):
            for session, link in links:
                await link.emit(events.task_progress(session, "t1", detail=f"step {step}"))
            await asyncio.sleep(0.001)
        last = {link: link._emitted for _, link in links}

        async def confirmed() -> bool:
            return all(link.confirmed >= last[link] for link in last)

        await until(confirmed, timeout=60, what="every event confirmed")
    finally:
        prof.disable()
    return int(pstats.Stats(prof).total_calls)  # type: ignore[attr-defined]


async def test_an_event_on_a_shared_stream_costs_the_runner_at_most_its_budget_of_calls(tmp_path: Path, reap) -> None:
    port = free_port()
    hub = await spawn("tests.hub.hub_proc", str(tmp_path / "hub.sqlite"), str(port))
    reap.append(hub)
    await read_until(hub, "listening")
    mux = HubMux(f"127.0.0.1:{port}")
    links = [(Session(run_id=f"calls-{i}"), HubLink(mux.address, ControlChannel(), mux=mux, close_timeout=30)) for i in range(RUNS)]
    try:
        for session, link in links:
            await link.emit(events.run_started(session, goal_summary="calls"))
        await _emit_rounds(links, 2)  # warm-up: every lane welcomed, first-call caches filled
        small, big = 5, 45
        per_event = (await _emit_rounds(links, big) - await _emit_rounds(links, small)) / ((big - small) * RUNS)
        assert per_event <= BUDGET, f"{per_event:.1f} calls per event"
        for _, link in links:
            await link.close()
    finally:
        await mux.close()
