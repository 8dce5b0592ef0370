"""Watchdog: the detectors over a run's event stream, and what the run does with a finding.

``RunContext.emit`` shows it every event (``observe``: synchronous, bounded work, no I/O). A
finding becomes a DriftEvent carrying its evidence, handed to the steerer's ladder at once
(``act``), not at the next task boundary: a stuck task may never reach one. The ladder decides:
a warning (the drift on the event stream), a nudge (a note injected into the running turn) or
a pause (GOLDFIVE_PAUSE_ESCALATE, which the run's ControlLoop applies mid-task). The severity
climbs with each finding of the same detector on the same task (INFO, WARNING, CRITICAL), and
the ladder's table maps each to its level. A task's predicted duration is watched with one
timer per task (``loop.call_later``), nothing polls.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from typing import Any, Protocol

from goldfive.aio import detached_timer
from goldfive.control import ControlMessage
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.protocols import Steerer
from goldfive.types import DriftEvent, DriftSeverity, Session
from goldfive.watchdog.config import WatchdogConfig
from goldfive.watchdog.detectors import EVIDENCE_TEXT, Finding, Step, TaskWatch


class _Controls(Protocol):
    def submit(self, intervention: ControlMessage) -> Any: ...


def _takes_live(steerer: Steerer) -> bool:
    """Whether ``steerer.handle_drift`` takes ``live=`` (DefaultSteerer and its subclasses do)."""
    try:
        params = inspect.signature(steerer.handle_drift).parameters
    except (TypeError, ValueError):
        return False
    return "live" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class WatchedRun(Protocol):
    """What the watchdog needs of its run (a RunContext; named here so this module does not
    import the run, which imports it)."""

    @property
    def session(self) -> Session: ...
    @property
    def steerer(self) -> Steerer: ...
    @property
    def controls(self) -> _Controls: ...
    @property
    def ended(self) -> bool: ...
    def own_context(self) -> contextvars.Context: ...

__all__ = ["SEVERITY_STEPS", "Watchdog"]

log = logging.getLogger("goldfive.watchdog")

#: The severity of a detector's 1st, 2nd, 3rd (and later) finding on one task.
SEVERITY_STEPS = (DriftSeverity.INFO, DriftSeverity.WARNING, DriftSeverity.CRITICAL)
_ENDS = frozenset({"task_completed", "task_failed", "task_cancelled"})
_WATCHED = frozenset({"task_started", "agent_step", "usage_recorded", "task_progress", "run_completed", "run_aborted"}) | _ENDS


class Watchdog:
    def __init__(self, ctx: WatchedRun, config: WatchdogConfig) -> None:
        self.ctx = ctx
        self.config = config
        self._tasks: dict[str, TaskWatch] = {}
        #: Tasks started with no timeout to watch: task id -> start (ms). Their TaskWatch is
        #: made at their first step (``_watch``): a task that reports nothing costs none.
        self._started: dict[str, int] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        #: Findings per (task, detector): the next one's severity.
        self._fired: dict[tuple[str, str], int] = {}
        #: Acting on a timer's finding (owned here, cancelled when the run ends).
        self._acting: set[asyncio.Task[None]] = set()
        self.findings = 0

    # -- the event stream ------------------------------------------------------------------
    def observe(self, ev: pb.Event) -> list[Finding]:
        kind = ev.WhichOneof("payload")
        if kind not in _WATCHED:
            return []
        if kind in _ENDS:  # the commonest watched kind needs no time: read none
            self.task_ended(getattr(ev, kind).task_id)
            return []
        if kind == "task_progress":  # a busy run's every event: no Step, one lookup
            p = ev.task_progress
            watch = self._tasks.get(p.task_id) or self._watch(p.task_id)
            if watch is not None:
                ts = ev.emitted_at
                watch.progress_note(ts.seconds * 1000 + ts.nanos // 1_000_000, p.detail, p.fraction)
            return []
        ts = ev.emitted_at
        ms = ts.seconds * 1000 + ts.nanos // 1_000_000
        if kind == "agent_step":
            a = ev.agent_step
            watch = self._tasks.get(a.task_id) or self._watch(a.task_id)  # (its watch made at its first step)
            if watch is None:
                return []
            if a.step == "tool_call":
                # Only the result's start is ever shown (evidence): a task's calls are kept for its life,
                # and a whole page of output in each would be too.
                text = a.text[:EVIDENCE_TEXT]
                return watch.tool_call(Step(ms, ev.sequence, "tool_call", a.tool_name, a.call_id, a.args_json, text))
            return watch.model_output(Step(ms, ev.sequence, "model_output", text=a.text))
        if kind == "usage_recorded":
            u = ev.usage_recorded
            watch = self._watch(u.task_id)
            if watch is None:
                return []
            return watch.model_call(Step(ms, ev.sequence, "model_call", text=u.model))
        if kind == "task_started":
            self.task_started(ev.task_started.task_id, ms)
        else:  # the run ended
            self.close()
        return []

    def task_started(self, task_id: str, ms: int) -> None:
        """``task_id`` started at ``ms`` (its TaskStarted event; the run tells the watchdog
        directly when it builds no event for it, ``RunContext.emit_task``)."""
        self.task_ended(task_id)
        plan = self.ctx.session.plan
        task = plan._by_id.get(task_id) if plan is not None else None
        predicted = task.predicted_duration_ms if task is not None else 0
        if self._fired:
            for key in [k for k in self._fired if k[0] == task_id]:
                del self._fired[key]
        if predicted <= 0:  # nothing to time: the watch is made at the task's first step
            self._started[task_id] = ms
            return
        watch = TaskWatch(task_id, self.config, ms, predicted_ms=predicted)
        self._tasks[task_id] = watch
        self._arm(watch)

    def _watch(self, task_id: str) -> TaskWatch | None:
        """The running task's watch (made now if the task started without one); None when
        ``task_id`` is not running."""
        watch = self._tasks.get(task_id)
        if watch is None:
            ms = self._started.pop(task_id, None)
            if ms is not None:
                watch = self._tasks[task_id] = TaskWatch(task_id, self.config, ms)
        return watch

    def task_ended(self, task_id: str) -> None:
        """``task_id`` completed, failed or was cancelled: its watch and timer go."""
        # A task in ``_started`` has no watch and no timer yet (the usual task: one lookup).
        if self._started.pop(task_id, None) is not None:
            return
        if task_id in self._tasks:
            del self._tasks[task_id]
        if task_id in self._timers:
            self._timers.pop(task_id).cancel()

    def close(self) -> None:
        """The run ended: no timer fires and nothing acts any more."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._tasks.clear()
        self._started.clear()
        for job in self._acting:
            job.cancel()

    # -- the timeout timer -----------------------------------------------------------------
    def _arm(self, watch: TaskWatch) -> None:
        due = watch.next_timeout_ms()
        if due is None:
            return
        delay_s = max(0.0, (due - self.ctx.session.clock()) / 1000)
        self._timers[watch.task_id] = detached_timer(delay_s, self._time_up, watch)

    def _time_up(self, watch: TaskWatch) -> None:
        if self._tasks.get(watch.task_id) is not watch or self.ctx.ended:
            return
        finding = watch.timed_out(self.ctx.session.clock())
        self._arm(watch)
        job = asyncio.get_running_loop().create_task(
            self.act([finding]), name=f"goldfive-watchdog-{watch.task_id}", context=self.ctx.own_context()
        )
        self._acting.add(job)
        job.add_done_callback(self._acting.discard)

    # -- acting ----------------------------------------------------------------------------
    def drift(self, finding: Finding) -> DriftEvent:
        key = (finding.task_id, finding.detector)
        n = self._fired.get(key, 0)
        self._fired[key] = n + 1
        severity = SEVERITY_STEPS[min(n, len(SEVERITY_STEPS) - 1)]
        meta = {"detector": finding.detector, "watchdog": True}
        return DriftEvent(finding.kind, severity, finding.detail, finding.task_id, metadata=meta, evidence=finding.evidence)

    async def act(self, findings: list[Finding]) -> None:
        """Each finding through the ladder, now (the ladder defers what must wait for a task
        boundary: a replan). A pause it asks for goes to the run's ControlLoop."""
        ctx = self.ctx
        for finding in findings:
            if ctx.ended:
                return
            self.findings += 1
            try:
                if not _takes_live(ctx.steerer):
                    # A steerer written before the watchdog (goldfive v1's protocol) cannot be
                    # told the task still runs: it records the drift, and the ladder acts on it
                    # at the next task boundary.
                    await ctx.steerer.report_drift(ctx.session, self.drift(finding))
                    continue
                outcome = await ctx.steerer.handle_drift(ctx.session, self.drift(finding), live=True)  # type: ignore[call-arg]
            except asyncio.CancelledError:
                raise
            except Exception:  # isolation boundary: a watchdog problem never breaks the agent's step
                log.exception("the watchdog could not act on %s for task %s", finding.detector, finding.task_id)
                continue
            if outcome.intervention is not None:
                ctx.controls.submit(outcome.intervention)
