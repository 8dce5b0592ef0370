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
import concurrent.futures
import logging
import os
import socket
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from goldfive.errors import RemoteError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.placement.spec import PlacedSpec

if TYPE_CHECKING:
    from goldfive.link.client import RemoteClient

__all__ = ["RunActor", "RunPool", "leaves_after", "run_placed"]

log = logging.getLogger("goldfive.placement")

#: Tries to read the run's history before giving up (the hub may be restarting too).
_HISTORY_TRIES = 8


async def _history(spec: PlacedSpec, client: RemoteClient | None = None) -> list[Event]:
    from goldfive.durable.from_hub import history_from_hub

    delay = 0.2
    for attempt in range(_HISTORY_TRIES):
        try:
            return list(await history_from_hub(spec.hub, spec.run_id, token=spec.read_token or None, client=client))
        except RemoteError as exc:
            if exc.code not in ("UNAVAILABLE", "DEADLINE_EXCEEDED") or attempt == _HISTORY_TRIES - 1:
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
    raise AssertionError("unreachable")


async def run_placed(spec: PlacedSpec, *, shared: bool = False, client: RemoteClient | None = None) -> str:
    """Run ``spec``'s run to its end, reporting to its hub; returns how it ended.

    A hub that already holds events of the run (this process replaces one that died) gets
    the run continued after its last event: completed tasks are not run again, an
    interrupted one runs again. A run the hub holds as ended is left alone.

    ``shared``: the run reports on this event loop's one ``Hub.ConnectShared`` stream (a lane
    of it), with the other runs of the process, instead of a stream of its own; ``client``:
    the connection its history is read on (else one of its own)."""
    from goldfive.durable.recover import recover
    from goldfive.link.runner import hub_link
    from goldfive.remote.launch import start_spec

    history = await _history(spec, client)
    if history:
        rec = recover(spec.run_id, history)
        if rec.ended:
            return f"already ended ({rec.ended}: {rec.end_reason})"
    launch = start_spec(
        spec.agent, spec.goal, spec.plan_json, spec.speed, search_dir=spec.search_dir or None,
        budget="" if history else spec.budget, budget_author=spec.budget_author,  # a continued run keeps its recorded budget
    )  # fmt: skip
    control, link = hub_link(spec.hub, None, token=spec.connect_token or None, shared=shared)
    runner = launch.factory(sinks=[link, _Admitted(link)], control=control, run_id=spec.run_id)
    if history:
        runner.continue_from_events(spec.run_id, history, holder=link)
    # A hub that refuses the run for good (another live hub holds its lock: it placed the run
    # again or took it back, so this is an old copy) ends it here: a copy nobody records must
    # not go on running the agent's tools.
    running = asyncio.ensure_future(runner.run(None if history else launch.user_input))
    refused = asyncio.ensure_future(link.refused.wait())
    try:
        await asyncio.wait({running, refused}, return_when=asyncio.FIRST_COMPLETED)
        if not running.done():
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            log.warning("placed run %s ended here: its hub refused it: %s", spec.run_id, link.stopped)
            return f"{REFUSED}{link.stopped}"
        outcome = running.result()
    finally:
        refused.cancel()
        if not running.done():
            running.cancel()
        try:
            await runner.close()
        except Exception:
            if not link.stopped:
                raise
            # refused: what the hub did not get is no longer this copy's to send (logged above)
    return "completed" if outcome.success else f"ended: {outcome.reason}"


class _Admitted:
    """A sink after the run's HubLink that holds the run at its first event (run_started, or
    run_resumed) until the hub welcomed it: a placed run runs only once its hub took it (and
    with it the run's lock). Refused (another live hub holds the lock), the run is cancelled
    there, before its first task; ``run_placed`` says so."""

    def __init__(self, link: Any) -> None:
        self.link = link
        self._open = False

    async def emit(self, event: Event) -> None:
        if self._open:
            return
        link = self.link
        waits = [asyncio.ensure_future(link.welcomed.wait()), asyncio.ensure_future(link.refused.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        self._open = True
        if link.refused.is_set() and not link.welcomed.is_set():
            task = asyncio.current_task()
            assert task is not None
            task.cancel()  # the run's own task: it ends here, run_placed reports the refusal
            await asyncio.sleep(0)

    async def close(self) -> None:
        return None


REFUSED = "refused: "


def leaves_after(outcome: str) -> bool:
    """Whether a single-run actor's process ends once its run ended so: refused by its hub
    (another live hub holds the run's lock, this is an old copy). Nobody will ever call on it
    again, and detached, it would stay idle until ``ray kill``. Any other end is reported to
    whoever waits for it (``wait``), and the placer ends the actor after reading it."""
    return outcome.startswith(REFUSED)


class _PlacedThread:
    """One placed run on a thread of its own, with its own event loop: a run that blocks its
    loop holds up no other run of the process. ``on_end`` is called with how it ended."""

    def __init__(self, spec: PlacedSpec, on_end: Callable[[str], None] | None = None) -> None:
        self.spec = spec
        self._on_end = on_end
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
        if self._on_end is not None:
            self._on_end(self._outcome)

    def wait(self, timeout: float | None = None) -> str:
        self._done.wait(timeout)
        return self._outcome


class RunActor:
    """One placed run in its own process. ``__init__`` starts the run on a thread of its own
    (with its own event loop) and returns at once; ``where`` answers while it runs,
    ``wait`` returns how it ended. Refused by its hub (``leaves_after``), the actor ends
    itself (``leave``)."""

    def __init__(self, spec: PlacedSpec) -> None:
        self._run = _PlacedThread(spec, self._ended)

    def _ended(self, outcome: str) -> None:
        if leaves_after(outcome):
            log.warning("placed run %s was refused by its hub: this actor ends", self._run.spec.run_id)
            self.leave()

    def leave(self) -> None:
        """End this actor for good: as a Ray actor (``ray.remote(RunActor)``, detached, with
        ``max_restarts=-1``) it kills itself with no restart; outside one there is nothing to end."""
        ray = sys.modules.get("ray")  # loaded in a Ray worker; this module never imports it
        if ray is None or not ray.is_initialized():
            return
        try:
            me = ray.get_runtime_context().current_actor
        except Exception:  # isolation boundary: not in an actor (a plain process using ray)
            return
        ray.kill(me, no_restart=True)

    def dials(self) -> dict[str, str]:
        """The run going on here (none once it ended) and the hub address it reports to."""
        return {} if self._run._done.is_set() else {self._run.spec.run_id: self._run.spec.hub}

    def where(self) -> tuple[str, int]:
        """This process's host name and pid (what the run's hello tells the hub)."""
        return socket.gethostname(), os.getpid()

    def wait(self, timeout: float | None = None) -> str:
        """How the run ended ("" if ``timeout`` passed first)."""
        return self._run.wait(timeout)


class RunPool:
    """Several placed runs in one process (``serve --ray --runs-per-actor N``), on one event
    loop (a thread of its own) and one ``Hub.ConnectShared`` stream to the hub, a lane per run;
    their histories are read on one connection. A run that blocks the loop (an agent calling
    ``time.sleep``) holds up the others: such agents want ``--runs-per-actor 1``.

    A run is added by calling :meth:`run` with its spec, which returns when the run ends. The
    placer makes that call with Ray's ``max_task_retries=-1``: when the process is lost (its
    node gone), Ray builds the actor again and calls :meth:`run` again for every run that had
    not ended, and each starts again here and continues from the hub's record, as a
    :class:`RunActor` rebuilt with its spec does. The call is the only record a pool needs."""

    def __init__(self, pool_id: str) -> None:
        self.pool_id = pool_id
        self._lock = threading.Lock()
        self._runs: dict[str, concurrent.futures.Future[str]] = {}
        self._hubs: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The connections histories are read on, by (hub, token): used on the loop only.
        self._clients: dict[tuple[str, str], RemoteClient] = {}

    def where(self) -> tuple[str, int]:
        """This process's host name and pid (what each run's hello tells the hub)."""
        return socket.gethostname(), os.getpid()

    def run(self, spec: PlacedSpec) -> str:
        """Start ``spec``'s run here unless it runs here already; how it ended, when it has.
        Several calls for one run (the hub's call retried, or a new hub's) all wait for the
        one copy of it."""
        with self._lock:
            done = self._runs.get(spec.run_id)
            if done is None:
                done = self._runs[spec.run_id] = asyncio.run_coroutine_threadsafe(_pooled(self, spec), self._event_loop())
                self._hubs[spec.run_id] = spec.hub
        try:
            return done.result()
        finally:
            with self._lock:
                if self._runs.get(spec.run_id) is done:
                    del self._runs[spec.run_id]
                    self._hubs.pop(spec.run_id, None)

    def running(self) -> list[str]:
        """The ids of the runs this process runs now."""
        with self._lock:
            return sorted(self._runs)

    def dials(self) -> dict[str, str]:
        """The runs going on here and the hub address each reports to (a hub started again
        finds its runs here and takes them back: goldfive.placement.ray_placer)."""
        with self._lock:
            return {run_id: self._hubs[run_id] for run_id in self._runs}

    # No coroutine method here: Ray makes a class with one an async actor, whose methods all
    # run on one loop of Ray's, so a ``run`` call waiting for its run would hold up the rest.
    def _event_loop(self) -> asyncio.AbstractEventLoop:
        """The runs' loop, started with the first run (called with ``_lock`` held)."""
        if self._loop is None:
            loop = self._loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name=f"goldfive-pool-{self.pool_id}", daemon=True).start()
        return self._loop

    def _client(self, spec: PlacedSpec) -> RemoteClient:
        from goldfive.link.client import RemoteClient

        key = (spec.hub, spec.read_token)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = RemoteClient(spec.hub, spec.read_token or None)
        return client


async def _pooled(pool: RunPool, spec: PlacedSpec) -> str:
    """``spec``'s run on ``pool``'s loop: how it ended, or why it failed."""
    try:
        return await run_placed(spec, shared=True, client=pool._client(spec))
    except Exception as exc:  # isolation boundary: the outcome says it, run() returns it
        log.exception("placed run %s failed", spec.run_id)
        return f"failed: {type(exc).__name__}: {exc}"
