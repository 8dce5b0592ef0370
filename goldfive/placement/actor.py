"""What a placed run's process does: build the run from its StartRun fields, continue it from
the hub's record if the hub already holds some of it, and report to the hub over
``Hub.Connect``.

:class:`RunActor` is a plain class; :mod:`goldfive.placement.ray_placer` makes it a Ray actor
(``ray.remote``), so nothing here imports ray. Ray restarts a lost actor by building it again
with the same :class:`PlacedSpec`; whether that is a first start or a restart is decided by
what the hub holds, not by Ray, so the same path serves a runner restarted by any other means.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading

from goldfive.errors import RemoteError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.placement.spec import PlacedSpec

__all__ = ["RunActor", "RunPool", "run_placed"]

log = logging.getLogger("goldfive.placement")

#: Tries to read the run's history before giving up (the hub may be restarting too).
_HISTORY_TRIES = 8


async def _history(spec: PlacedSpec) -> list[Event]:
    from goldfive.durable.from_hub import history_from_hub

    delay = 0.2
    for attempt in range(_HISTORY_TRIES):
        try:
            return list(await history_from_hub(spec.hub, spec.run_id, token=spec.read_token or None))
        except RemoteError as exc:
            if exc.code not in ("UNAVAILABLE", "DEADLINE_EXCEEDED") or attempt == _HISTORY_TRIES - 1:
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
    raise AssertionError("unreachable")


async def run_placed(spec: PlacedSpec) -> str:
    """Run ``spec``'s run to its end, reporting to its hub; returns how it ended.

    A hub that already holds events of the run (this process replaces one that died) gets
    the run continued after its last event: completed tasks are not run again, an
    interrupted one runs again. A run the hub holds as ended is left alone."""
    from goldfive.durable.recover import recover
    from goldfive.link.runner import hub_link
    from goldfive.remote.launch import start_spec

    history = await _history(spec)
    if history:
        rec = recover(spec.run_id, history)
        if rec.ended:
            return f"already ended ({rec.ended}: {rec.end_reason})"
    launch = start_spec(
        spec.agent, spec.goal, spec.plan_json, spec.speed, search_dir=spec.search_dir or None,
        budget="" if history else spec.budget, budget_author=spec.budget_author,  # a continued run keeps its recorded budget
    )  # fmt: skip
    control, link = hub_link(spec.hub, None, token=spec.connect_token or None)
    runner = launch.factory(sinks=[link], control=control, run_id=spec.run_id)
    if history:
        runner.continue_from_events(spec.run_id, history, holder=link)
    try:
        outcome = await runner.run(None if history else launch.user_input)
    finally:
        await runner.close()
    return "completed" if outcome.success else f"ended: {outcome.reason}"


class _PlacedThread:
    """One placed run on a thread of its own, with its own event loop: a run that blocks its
    loop holds up no other run of the process."""

    def __init__(self, spec: PlacedSpec) -> None:
        self.spec = spec
        self._done = threading.Event()
        self._outcome = ""
        self._thread = threading.Thread(target=self._main, name=f"goldfive-run-{spec.run_id}", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            self._outcome = asyncio.run(run_placed(self.spec))
        except BaseException as exc:  # isolation boundary: the outcome says it, wait() returns it
            log.exception("placed run %s failed", self.spec.run_id)
            self._outcome = f"failed: {type(exc).__name__}: {exc}"
        finally:
            self._done.set()

    def wait(self, timeout: float | None = None) -> str:
        self._done.wait(timeout)
        return self._outcome


class RunActor:
    """One placed run in its own process. ``__init__`` starts the run on a thread of its own
    (with its own event loop) and returns at once; ``where`` answers while it runs,
    ``wait`` returns how it ended."""

    def __init__(self, spec: PlacedSpec) -> None:
        self._run = _PlacedThread(spec)

    def where(self) -> tuple[str, int]:
        """This process's host name and pid (what the run's hello tells the hub)."""
        return socket.gethostname(), os.getpid()

    def wait(self, timeout: float | None = None) -> str:
        """How the run ended ("" if ``timeout`` passed first)."""
        return self._run.wait(timeout)


class RunPool:
    """Several placed runs in one process (``serve --ray --runs-per-actor N``), each on a
    thread of its own as in :class:`RunActor`.

    A run is added by calling :meth:`run` with its spec, which returns when the run ends. The
    placer makes that call with Ray's ``max_task_retries=-1``: when the process is lost (its
    node gone), Ray builds the actor again and calls :meth:`run` again for every run that had
    not ended, and each starts again here and continues from the hub's record, as a
    :class:`RunActor` rebuilt with its spec does. The call is the only record a pool needs."""

    def __init__(self, pool_id: str) -> None:
        self.pool_id = pool_id
        self._lock = threading.Lock()
        self._runs: dict[str, _PlacedThread] = {}

    def where(self) -> tuple[str, int]:
        """This process's host name and pid (what each run's hello tells the hub)."""
        return socket.gethostname(), os.getpid()

    def run(self, spec: PlacedSpec) -> str:
        """Start ``spec``'s run here unless it runs here already; how it ended, when it has."""
        with self._lock:
            placed = self._runs.get(spec.run_id)
            if placed is None:
                placed = self._runs[spec.run_id] = _PlacedThread(spec)
        outcome = placed.wait()
        with self._lock:
            self._runs.pop(spec.run_id, None)
        return outcome

    def running(self) -> list[str]:
        """The ids of the runs this process runs now."""
        with self._lock:
            return sorted(self._runs)
