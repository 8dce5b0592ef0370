"""RunPool (``serve --ray --runs-per-actor N``'s actor) without Ray: the runs of one pool share
one event loop and one Hub.ConnectShared stream, and each is stored whole by a real hub."""

from __future__ import annotations

import json
import sys
import threading
import uuid
from pathlib import Path

from goldfive.link import mux as hub_mux
from goldfive.placement.actor import RunPool
from goldfive.placement.pending import PlacedRun
from goldfive.placement.spec import PlacedSpec
from goldfive.testing import HubThread, until_sync

PLAN = {"summary": "two steps", "tasks": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}],
        "edges": [{"from_task_id": "a", "to_task_id": "b"}]}  # fmt: skip
#: Each task notes the thread it ran on, then waits until the test opens the gate.
GATED = """
import asyncio
import threading

THREADS = set()
OPEN = threading.Event()

async def agent(task, session):
    THREADS.add(threading.get_ident())
    while not OPEN.is_set():
        await asyncio.sleep(0.01)
    return f"did {task.id}"
"""


def test_a_pools_runs_share_one_loop_and_one_stream_and_each_is_stored_whole(tmp_path: Path) -> None:
    name = f"pooled_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(GATED, encoding="utf-8")
    hub = HubThread(tmp_path / "runs.sqlite")
    pool = RunPool("p1")
    run_ids = [f"pooled-{i}" for i in range(3)]
    outcomes: dict[str, str] = {}
    try:
        recorder = hub.server.extra[0].recorder
        for run_id in run_ids:
            hub.host.adopt(PlacedRun(run_id, recorder, goal_summary="two steps").run)  # as the placer does
        specs = [PlacedSpec(run_id=r, hub=hub.addr, agent=f"{name}:agent", goal="two steps", plan_json=json.dumps(PLAN),
                            search_dir=str(tmp_path)) for r in run_ids]  # fmt: skip
        callers = [threading.Thread(target=lambda s=s: outcomes.__setitem__(s.run_id, pool.run(s))) for s in specs]
        for t in callers:
            t.start()

        def started(run_id: str) -> bool:
            run = hub.host.get(run_id)
            return run is not None and any(e.WhichOneof("payload") == "task_started" for e in run.events_after(-1))

        until_sync(lambda: len(pool.running()) == 3 and all(started(r) for r in run_ids), what="the three runs in their first task")
        agents = sys.modules[name]
        assert len(agents.THREADS) == 1 and threading.get_ident() not in agents.THREADS  # one loop, not the caller's
        (entry,) = [e for e in hub_mux._SHARED.values() if e[2] is pool._loop]
        assert entry[1] == 3 and entry[0].streams == 1  # three lanes of one stream
        again = threading.Thread(target=lambda: outcomes.__setitem__("again", pool.run(specs[0])))
        again.start()  # a second call for a run already here waits for it; no second copy
        agents.OPEN.set()
        for t in [*callers, again]:
            t.join(30)
    finally:
        agents_mod = sys.modules.get(name)
        if agents_mod is not None:
            agents_mod.OPEN.set()
        hub.stop()
    assert outcomes == {**{r: "completed" for r in run_ids}, "again": "completed"}
    assert pool.running() == []
    for run_id in run_ids:
        run = hub.host.get(run_id)
        assert run is not None
        kinds = [e.WhichOneof("payload") for e in run.events_after(-1)]
        assert kinds.count("task_started") == 2 and kinds.count("run_started") == 1 and kinds[-1] == "run_completed"
