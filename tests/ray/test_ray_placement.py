"""Runs started through a real hub (``goldfive serve --ray``) are placed on a real local
multi-node Ray cluster, steered with ``ctl``, and survive the loss of the node they run on."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goldfive.pb.goldfive.v1 import events_pb2, service_pb2
from goldfive.errors import RemoteError
from goldfive.link.client import RemoteClient
from goldfive.sinks import replay_from_sqlite
from goldfive.testing import free_port
from tests.ray.conftest import Hub, RayCluster, start_hub, stop_hub, wait_for


#: Four steps, each long enough (3 s) for a node to be removed, or a hub stopped, while one
#: runs: the test sees the second task running, then cuts it off well before it could end.
SLOW_AGENT = """
import asyncio

async def agent(task, session):
    await asyncio.sleep(3)
    return f"did {task.id}"
"""
#: Imports in the hub (which has GOLDFIVE_NODE_OK set) but not on the cluster's nodes: like an
#: agent whose dependencies were installed on the hub's machine only.
HUB_ONLY_AGENT = """
import os
assert os.environ.get("GOLDFIVE_NODE_OK"), "this agent's dependencies are not installed on this node"

async def agent(task, session):
    return "never"
"""
#: Every task but "clean" is quick; "clean" runs until the test creates the file ``gate``. So
#: runs started one after another (each `ctl start` is a process: 4-7 s apiece on a loaded
#: machine, longer than a SLOW_AGENT task) are all in "clean" at once, however far apart.
GATED_AGENT = """
import asyncio
from pathlib import Path

async def agent(task, session):
    if task.id == "clean":
        while not Path({gate!r}).exists():
            await asyncio.sleep(0.1)
    await asyncio.sleep(0.2)
    return f"did {{task.id}}"
"""
OPERATOR = "op=" + "o" * 24
RUNNER = "ci=" + "r" * 24
PLAN = {
    "summary": "four steps",
    "tasks": [{"id": t, "title": t.title()} for t in ("fetch", "clean", "analyse", "report")],
    "edges": [{"from_task_id": a, "to_task_id": b} for a, b in (("fetch", "clean"), ("clean", "analyse"), ("analyse", "report"))],
}


@pytest.fixture(scope="module")
def hub(ray_cluster: RayCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    workdir = tmp_path_factory.mktemp("hub")
    (workdir / "slowagents.py").write_text(SLOW_AGENT)
    (workdir / "plan.json").write_text(json.dumps(PLAN))
    (workdir / "hubonly.py").write_text(HUB_ONLY_AGENT)
    # Tokens: the actors connect with the runner token and read a run's history back with the
    # operator's (a runner token may only call Hub.Connect).
    h = start_hub(ray_cluster.address, workdir, "--runner-token", RUNNER, token=OPERATOR, env={"GOLDFIVE_NODE_OK": "1"})
    try:
        yield h
    finally:
        stop_hub(h.proc)


def snapshot(address: str, run_id: str, token: str = OPERATOR.split("=", 1)[1]) -> service_pb2.RunSnapshot:
    """GetRun; a hub on a loaded machine that fails a connection for a moment is asked again."""

    async def get() -> service_pb2.RunSnapshot:
        async with RemoteClient(address, token or None) as client:
            return await client.get_run(run_id)

    for attempt in range(20):
        try:
            return asyncio.run(get())
        except RemoteError as exc:
            if exc.code not in ("UNAVAILABLE", "DEADLINE_EXCEEDED") or attempt == 19:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


def history(address: str, run_id: str, token: str = OPERATOR.split("=", 1)[1]) -> list[events_pb2.Event]:
    """Every event the hub holds of a finished run, as it streams them."""

    async def read() -> list[events_pb2.Event]:
        out: list[events_pb2.Event] = []
        async with RemoteClient(address, token or None) as client:
            async for batch in client.subscribe_batches(run_id, -1):
                out.extend(batch)
                if out and out[-1].WhichOneof("payload") in ("run_completed", "run_aborted"):
                    return out
        return out

    return asyncio.run(asyncio.wait_for(read(), 30))


def kinds(events: list[events_pb2.Event]) -> list[str]:
    return [str(ev.WhichOneof("payload")) for ev in events]


def per_task(events: list[events_pb2.Event], kind: str) -> Counter[str]:
    return Counter(getattr(ev, kind).task_id for ev in events if ev.WhichOneof("payload") == kind)


def test_a_demo_run_executes_in_an_actor_on_the_cluster_and_is_paused_resumed_and_steered_with_ctl(hub: Hub, ray_cluster: RayCluster) -> None:
    started = hub.ctl("start", "demo", "--speed", "4")
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    running = wait_for(lambda: (s := snapshot(hub.address, run_id)).summary.pid and s, 120, "the run connected from its actor")
    s = running.summary
    assert s.origin == "ray" and s.connection == "connected"
    assert s.pid != hub.proc.pid
    ray_cluster.node_of(s.pid)  # a worker process of one of the cluster's nodes
    listed = hub.ctl("runs")
    assert run_id in listed.stdout and " ray " in listed.stdout

    paused = hub.ctl("pause", run_id)
    assert paused.returncode == 0 and "SUCCESS" in paused.stdout, paused.stdout + paused.stderr
    wait_for(lambda: snapshot(hub.address, run_id).paused, 30, "the run paused")
    resumed = hub.ctl("resume", run_id)
    assert resumed.returncode == 0 and "SUCCESS" in resumed.stdout, resumed.stdout + resumed.stderr
    steered = hub.ctl("steer", run_id, "three slides, no more")
    assert steered.returncode == 0 and "SUCCESS" in steered.stdout, steered.stdout + steered.stderr

    def finished_or_approved() -> bool:
        snap = snapshot(hub.address, run_id)
        for approval in snap.pending_approvals:
            hub.ctl("approve", run_id, approval.target_id)
        return snap.summary.state in ("COMPLETED", "ABORTED")

    wait_for(finished_or_approved, 180, "the run finished")
    events = history(hub.address, run_id)
    assert kinds(events)[-1] == "run_completed", kinds(events)[-6:]
    assert [ev.sequence for ev in events] == list(range(len(events)))
    controls = [ev.control_received.kind for ev in events if ev.WhichOneof("payload") == "control_received"]
    assert len(controls) >= 3  # pause, resume, steer (and the approvals) reached the run in its actor
    assert "drift_detected" in kinds(events) and "approval_granted" in kinds(events)


def test_a_run_whose_node_is_lost_mid_task_continues_on_another_node_without_redoing_completed_tasks(hub: Hub, ray_cluster: RayCluster) -> None:
    workdir = Path(hub.proc.args[hub.proc.args.index("--db") + 1]).parent  # type: ignore[index, union-attr, arg-type]
    started = hub.ctl("start", "slowagents:agent", "--goal", "four steps", "--plan", str(workdir / "plan.json"))
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()

    def mid_second_task() -> service_pb2.RunSnapshot | None:
        snap = snapshot(hub.address, run_id)
        done = {t.id for t in snap.plan.tasks if t.status == 3}  # COMPLETED
        return snap if "fetch" in done and snap.summary.current_task == "clean" else None

    before = wait_for(mid_second_task, 120, "the run is in its second task")
    first_pid = before.summary.pid
    lost = ray_cluster.node_of(first_pid)
    ray_cluster.cluster.remove_node(lost, allow_graceful=False)  # as a machine that dies: its processes killed
    try:
        wait_for(lambda: snapshot(hub.address, run_id).summary.state in ("COMPLETED", "ABORTED"), 180, "the run finished")
    finally:
        ray_cluster.add_node()  # the module's later tests get two nodes again
    after = snapshot(hub.address, run_id).summary
    assert after.state == "COMPLETED"
    assert after.pid != first_pid
    events = history(hub.address, run_id)
    assert [ev.sequence for ev in events] == list(range(len(events)))  # gap-free, no duplicates
    assert len({ev.event_id for ev in events}) == len(events)
    completed = per_task(events, "task_completed")
    assert completed == Counter({"fetch": 1, "clean": 1, "analyse": 1, "report": 1})
    started_counts = per_task(events, "task_started")
    assert started_counts["fetch"] == 1  # completed before the loss: never run again
    assert started_counts["analyse"] == started_counts["report"] == 1
    assert started_counts["clean"] == 2  # cut off by the loss: it ran again
    (resumed,) = [ev.run_resumed for ev in events if ev.WhichOneof("payload") == "run_resumed"]
    assert list(resumed.interrupted_task_ids) == ["clean"]
    assert kinds(events).count("run_started") == 1 and kinds(events)[-1] == "run_completed"


def test_a_run_no_node_can_hold_is_listed_pending_placement_with_rays_reason(ray_cluster: RayCluster, tmp_path: Path) -> None:
    h = start_hub(ray_cluster.address, tmp_path, "--ray-resources", '{"num_cpus": 0.1, "resources": {"gpu_big": 1}}')
    try:
        started = h.ctl("start", "demo")
        assert started.returncode == 0, started.stderr
        run_id = started.stdout.strip()
        assert len(run_id) == 32

        def reason() -> str:
            out = h.ctl("runs", "--json")
            (row,) = json.loads(out.stdout)
            return str(row["connection"]) if "no live node" in row.get("connection", "") else ""

        why = wait_for(reason, 90, "the pending reason")
        (row,) = json.loads(h.ctl("runs", "--json").stdout)
        assert row["state"] == "PENDING_PLACEMENT" and row["origin"] == "ray"
        assert why.startswith("pending placement: Ray PENDING_CREATION: no live node has {gpu_big: 1}")
        text = h.ctl("runs").stdout
        assert "PENDING_PLACEMENT" in text and "no live node has {gpu_big: 1}" in text
        refused = h.ctl("pause", run_id)
        assert refused.returncode == 1 and "not active" in refused.stdout + refused.stderr
    finally:
        stop_hub(h.proc)


def test_a_run_whose_process_fails_before_connecting_is_listed_placement_failed_with_why(hub: Hub) -> None:
    workdir = Path(hub.proc.args[hub.proc.args.index("--db") + 1]).parent  # type: ignore[index, union-attr, arg-type]
    started = hub.ctl("start", "hubonly:agent", "--goal", "g", "--plan", str(workdir / "plan.json"))
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()

    seen: list[dict[str, str]] = []

    def row() -> dict[str, str] | None:
        rows = {r["run_id"]: r for r in json.loads(hub.ctl("runs", "--json").stdout)}
        seen[:] = [rows[run_id]]
        return rows[run_id] if rows[run_id]["state"] == "PLACEMENT_FAILED" else None

    try:
        failed = wait_for(row, 60, "the run shows its placement failed")
    except AssertionError as exc:  # (it failed once in 60 s in a full run: say what the run showed instead)
        raise AssertionError(f"{exc}; the run showed {seen[-1] if seen else 'nothing'}") from None
    assert failed["connection"].startswith("placement failed: its process ended before the run connected: failed: ")
    assert "this agent's dependencies are not installed on this node" in failed["connection"]


def _second_task_stored(db: Path, run_id: str) -> bool:
    """The hub stored the end of the run's first task and the start of its second (in its
    database, not only in its memory)."""
    stored = [(ev.WhichOneof("payload"), ev) for ev in replay_from_sqlite(db, run_id)]
    done = {ev.task_completed.task_id for kind, ev in stored if kind == "task_completed"}
    begun = {ev.task_started.task_id for kind, ev in stored if kind == "task_started"}
    return done == {"fetch"} and "clean" in begun


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_a_hub_stopped_mid_task_and_started_again_places_its_interrupted_run_again_and_the_run_goes_on(ray_cluster: RayCluster, tmp_path: Path) -> None:
    """A hub that stops (SIGTERM) ends its actors, as it leaves its hosted runs interrupted; the
    next start places the run again, which continues from the hub's record."""
    (tmp_path / "slowagents.py").write_text(SLOW_AGENT)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    first = start_hub(ray_cluster.address, tmp_path)
    try:
        started = first.ctl("start", "slowagents:agent", "--goal", "four steps", "--plan", str(tmp_path / "plan.json"))
        assert started.returncode == 0, started.stderr
        run_id = started.stdout.strip()
        wait_for(lambda: _second_task_stored(tmp_path / "hub.sqlite", run_id), 120, "the hub stored the start of the second task")
        first_pid = snapshot(first.address, run_id, token="").summary.pid
    finally:
        stop_hub(first.proc)  # SIGTERM: the hub ends its actors
    wait_for(lambda: _gone(first_pid), 30, "the run's actor process ended with its hub")
    second = start_hub(ray_cluster.address, tmp_path)
    try:
        wait_for(lambda: snapshot(second.address, run_id, token="").summary.state in ("COMPLETED", "ABORTED"), 180, "the run finished")
        assert snapshot(second.address, run_id, token="").summary.origin == "ray"  # placed again by the new hub
        events = history(second.address, run_id, token="")
    finally:
        stop_hub(second.proc)
    assert [ev.sequence for ev in events] == list(range(len(events)))
    assert kinds(events).count("run_started") == 1 and kinds(events)[-1] == "run_completed"
    (resumed,) = [ev.run_resumed for ev in events if ev.WhichOneof("payload") == "run_resumed"]
    # The hub had stored fetch's end and clean's start when it stopped: fetch never runs again;
    # clean was cut off (unless its end was stored in the instant before the stop) and runs again.
    again = set(resumed.interrupted_task_ids)
    assert again <= {"clean"}
    assert per_task(events, "task_completed") == Counter({"fetch": 1, "clean": 1, "analyse": 1, "report": 1})
    assert per_task(events, "task_started") == Counter({t: 1 + (t in again) for t in ("fetch", "clean", "analyse", "report")})


@pytest.mark.parametrize("per_actor", ["1", "2"], ids=["own-actor", "pool"])
def test_a_placed_run_survives_its_hub_killed_and_goes_on_in_the_same_process_under_the_hub_started_again(
    ray_cluster: RayCluster, tmp_path: Path, per_actor: str
) -> None:
    """Actors are detached: a hub killed mid-task (SIGKILL) leaves its run going on in its actor
    (one of its own, or a pool given one run of two); the hub started again on the same
    database and address takes it back instead of placing it again: the same process finishes
    it, no task redone, one copy, and the actor ends with the run (no detached actor left)."""
    (tmp_path / "slowagents.py").write_text(SLOW_AGENT)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    listen = ("--listen", f"127.0.0.1:{free_port()}", "--runs-per-actor", per_actor)
    first = start_hub(ray_cluster.address, tmp_path, *listen)
    try:
        started = first.ctl("start", "slowagents:agent", "--goal", "four steps", "--plan", str(tmp_path / "plan.json"))
        assert started.returncode == 0, started.stderr
        run_id = started.stdout.strip()
        wait_for(lambda: _second_task_stored(tmp_path / "hub.sqlite", run_id), 120, "the hub stored the start of the second task")
        pid = snapshot(first.address, run_id, token="").summary.pid
        first.proc.kill()  # the hub dies; its run's actor is detached and goes on
        first.proc.wait(30)
    finally:
        stop_hub(first.proc)
    assert not _gone(pid)
    second = start_hub(ray_cluster.address, tmp_path, *listen)
    try:
        seen: list[Any] = []

        def finished() -> bool:
            seen[:] = [snapshot(second.address, run_id, token="").summary]
            return seen[0].state in ("COMPLETED", "ABORTED")

        try:
            wait_for(finished, 120, "the run finished")
        except AssertionError as exc:  # (it did not, once, under -n 2 at load 13-20: say what the run showed)
            raise AssertionError(f"{exc}; the run showed {str(seen[-1]) if seen else 'nothing'}") from None
        after = snapshot(second.address, run_id, token="").summary
        events = history(second.address, run_id, token="")
        wait_for(lambda: _gone(pid), 30, "the actor ended with its run")
    finally:
        stop_hub(second.proc)
    assert after.state == "COMPLETED" and after.origin == "ray"
    assert after.pid == pid, "the run went on in the process it ran in"
    assert [ev.sequence for ev in events] == list(range(len(events)))  # gap-free, no duplicates
    assert len({ev.event_id for ev in events}) == len(events)
    assert "run_resumed" not in kinds(events), "taken back, not placed again"
    assert per_task(events, "task_started") == per_task(events, "task_completed") == Counter({"fetch": 1, "clean": 1, "analyse": 1, "report": 1})


def test_runs_sharing_an_actor_process_all_go_on_when_that_process_is_killed(ray_cluster: RayCluster, tmp_path: Path) -> None:
    """serve --runs-per-actor 2: three runs take two actor processes (two in the first, one in
    the second). Killing the first process mid-task cuts off both of its runs; Ray builds its
    actor again and each run continues there from the hub's record, no completed task run
    again, while the run in the other process goes on untouched."""
    gate = tmp_path / "go"  # the runs' second task ends once this exists
    (tmp_path / "gatedagents.py").write_text(GATED_AGENT.format(gate=str(gate)))
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    h = start_hub(ray_cluster.address, tmp_path, "--runs-per-actor", "2")
    try:
        run_ids = []
        for _ in range(3):
            started = h.ctl("start", "gatedagents:agent", "--goal", "four steps", "--plan", str(tmp_path / "plan.json"))
            assert started.returncode == 0, started.stderr
            run_ids.append(started.stdout.strip())

        def all_mid_second_task() -> list[service_pb2.RunSnapshot] | None:
            snaps = [snapshot(h.address, r, token="") for r in run_ids]
            mid = all(s.summary.current_task == "clean" and any(t.id == "fetch" and t.status == 3 for t in s.plan.tasks) for s in snaps)
            return snaps if mid and all(s.summary.pid for s in snaps) else None

        snaps = wait_for(all_mid_second_task, 120, "the three runs in their second task")
        pids = [s.summary.pid for s in snaps]
        assert pids[0] == pids[1] != pids[2], f"two runs per process: {pids}"
        os.kill(pids[0], signal.SIGKILL)  # the shared process dies with both its runs mid-task
        gate.touch()
        wait_for(lambda: all(snapshot(h.address, r, token="").summary.state in ("COMPLETED", "ABORTED") for r in run_ids),
                 180, "the three runs finished")  # fmt: skip
        after = [snapshot(h.address, r, token="").summary for r in run_ids]
        histories = [history(h.address, r, token="") for r in run_ids]
    finally:
        stop_hub(h.proc)
    assert [s.state for s in after] == ["COMPLETED"] * 3
    assert after[0].pid == after[1].pid != pids[0], "both runs of the killed process continued in its rebuilt actor"
    for events, cut in zip(histories, (True, True, False)):
        assert [ev.sequence for ev in events] == list(range(len(events)))
        assert per_task(events, "task_completed") == Counter({"fetch": 1, "clean": 1, "analyse": 1, "report": 1})
        resumed = [ev.run_resumed for ev in events if ev.WhichOneof("payload") == "run_resumed"]
        if cut:
            (one,) = resumed
            assert list(one.interrupted_task_ids) == ["clean"]
            assert per_task(events, "task_started")["fetch"] == 1
        else:
            assert resumed == [] and per_task(events, "task_started") == Counter({"fetch": 1, "clean": 1, "analyse": 1, "report": 1})


def test_a_second_hub_on_the_same_database_leaves_a_live_hubs_placed_run_alone(ray_cluster: RayCluster, tmp_path: Path) -> None:
    """A hub started on the database of a hub that is alive finds its run unfinished, its lock
    held by the live hub: it neither takes it back nor places it again (it did place it again,
    a second copy, before it checked who answers, and the lock decides now): the run finishes
    in its one actor, resumed never."""
    (tmp_path / "slowagents.py").write_text(SLOW_AGENT)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    first = start_hub(ray_cluster.address, tmp_path)
    second = None
    try:
        started = first.ctl("start", "slowagents:agent", "--goal", "four steps", "--plan", str(tmp_path / "plan.json"))
        assert started.returncode == 0, started.stderr
        run_id = started.stdout.strip()
        pid = wait_for(lambda: snapshot(first.address, run_id, token="").summary.pid, 120, "the run connected from its actor")
        second = start_hub(ray_cluster.address, tmp_path)  # returns once it has looked at the runs it placed
        left = [line for line in second.stderr if f"run {run_id} is left to hub placing runs (process {first.proc.pid} " in line]
        assert left and f"which holds its lock (its actor dials {first.address})" in left[0], "".join(second.stderr)[-2000:]
        wait_for(lambda: snapshot(first.address, run_id, token="").summary.state in ("COMPLETED", "ABORTED"), 120, "the run finished")
        after = snapshot(first.address, run_id, token="").summary
        events = history(first.address, run_id, token="")
    finally:
        stop_hub(first.proc)
        if second is not None:
            stop_hub(second.proc)
    assert after.state == "COMPLETED" and after.pid == pid
    assert "run_resumed" not in kinds(events) and kinds(events).count("run_started") == 1
    assert per_task(events, "task_started") == Counter({"fetch": 1, "clean": 1, "analyse": 1, "report": 1})


def test_two_hubs_started_at_once_on_a_dead_hubs_database_place_its_run_again_once(ray_cluster: RayCluster, tmp_path: Path) -> None:
    """The re-placement race, decided by the run lock: a hub is killed mid-task (its actor goes
    on, dialing the dead hub's address) and two hubs start at once on its database, on other
    addresses. Both find the run unfinished and its actor dialing an address where no hub
    answers; only the one that takes the run's lock ends that actor and places the run again,
    the other leaves it to the lock's holder. Before, both did (two copies, two resumes)."""
    (tmp_path / "slowagents.py").write_text(SLOW_AGENT)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    db = tmp_path / "hub.sqlite"
    first = start_hub(ray_cluster.address, tmp_path, "--listen", f"127.0.0.1:{free_port()}")
    try:
        started = first.ctl("start", "slowagents:agent", "--goal", "four steps", "--plan", str(tmp_path / "plan.json"))
        assert started.returncode == 0, started.stderr
        run_id = started.stdout.strip()
        wait_for(lambda: _second_task_stored(db, run_id), 120, "the hub stored the start of the second task")
        first.proc.kill()  # its actor is detached and goes on, dialing this dead hub
        first.proc.wait(30)
    finally:
        stop_hub(first.proc)
    hubs: list[Hub] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            hubs.append(start_hub(ray_cluster.address, tmp_path, "--listen", f"127.0.0.1:{free_port()}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors and len(hubs) == 2, errors

        def stored_end() -> bool:
            evs = list(replay_from_sqlite(db, run_id))
            return bool(evs) and evs[-1].WhichOneof("payload") == "run_completed"

        wait_for(stored_end, 180, "the run completed and stored")
        logs = ["".join(h.stderr) for h in hubs]
    finally:
        for h in hubs:
            stop_hub(h.proc)
    placers = [text for text in logs if f"run {run_id} placed on Ray again" in text]
    leavers = [text for text in logs if f"run {run_id} is left to" in text and "which holds its lock" in text]
    assert len(placers) == 1 and len(leavers) == 1, logs
    events = list(replay_from_sqlite(db, run_id))
    assert [ev.sequence for ev in events] == list(range(len(events)))
    assert len([k for k in kinds(events) if k == "run_resumed"]) == 1, "placed again once"
    assert per_task(events, "task_completed") == Counter({"fetch": 1, "clean": 1, "analyse": 1, "report": 1})
    assert per_task(events, "task_started")["fetch"] == 1
