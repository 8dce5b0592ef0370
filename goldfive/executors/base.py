"""The scheduling both executors share: boundaries, batches, the race against controls.

A *boundary* is the moment between tasks: rewinds are applied, the ladder acts on drifts
reported mid-task, queued controls are handled (by the run's ControlLoop), and a paused run
waits there. A *batch* is the set of tasks started together (one for SequentialExecutor, a
topological stage for ParallelDAGExecutor); while it runs, the executor awaits one future of
its own that the first of these sets: an agent's completion (``aio.Completions.wake``), a
control queued (``ControlChannel.wake_on_send``), the ladder's intervention (``ControlLoop.wake``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from goldfive import events
from goldfive.aio import Completions, cancel_and_wait
from goldfive.errors import GoldfiveError
from goldfive.executors._ready import ReadyFrontier
from goldfive.results import ExecutionOutcome, InvocationResult
from goldfive.run.context import RunContext
from goldfive.run.current_run import current_or_none, running
from goldfive.run.control_loop import CustomHandler, RunCancelled
from goldfive.run.dispatch import ControlOutcome, dispatch_control
from goldfive.run.steering_controls import deliver_queued
from goldfive.steering import has_queued_notes
from goldfive.control import ControlMessage
from goldfive.protocols import EXACT_TRANSITIONS, move_task
from goldfive.controls.payloads import Control, Steer
from goldfive.steerer import FAILURE_REASONS
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Plan, Session, Task, TaskStatus
from goldfive.usage.report import close_scope, open_scope

log = logging.getLogger("goldfive.executor")

S = TaskStatus
_TERMINAL = frozenset(s for s in TaskStatus if s.is_terminal)


class ExecutorBase:
    def __init__(
        self,
        *,
        max_task_invocations: int | None = None,
        max_plan_reinvocations: int | None = None,
        cancel_grace_s: float | None = None,
    ) -> None:
        self.max_task_invocations = max_task_invocations if max_task_invocations is not None else max_plan_reinvocations
        self.cancel_grace_s = cancel_grace_s
        self._ready = ReadyFrontier()

    # -- entry points --------------------------------------------------------------
    async def run(
        self,
        ctx: RunContext | None = None,
        *,
        plan: Plan | None = None,
        session: Session | None = None,
        adapter: Any = None,
        steerer: Any = None,
        planner: Any = None,
        sinks: list[Any] | None = None,
        control: Any = None,
    ) -> ExecutionOutcome:
        """Run the plan to its end. ``run(ctx)`` is how the Runner calls it; the keyword form of
        the Executor protocol (``plan=, session=, adapter=, ...``) drives an executor without a
        Runner and builds the same RunContext the Runner would."""
        direct = False
        if ctx is None:
            if session is None:
                raise TypeError("run() needs a RunContext, or the Executor protocol's keywords with session=")
            ctx = current_or_none()
            if ctx is None or ctx.session is not session:  # no Runner: this executor owns the run
                direct = True
                ctx = RunContext(
                    session, sinks=list(sinks or []), steerer=steerer, planner=planner, adapter=adapter, control=control
                )
        if current_or_none() is ctx:  # the Runner bound it
            return await self._run_plan(ctx, plan, direct=direct)
        with running(ctx):
            return await self._run_plan(ctx, plan, direct=direct)

    async def _run_plan(self, ctx: RunContext, plan: Plan | None, *, direct: bool) -> ExecutionOutcome:
        if ctx.session.plan is None:
            ctx.session.plan = plan
        if self.cancel_grace_s is not None:
            ctx.config = replace(ctx.config, cancel_grace_s=self.cancel_grace_s)
        ctx.controls.custom = self.custom_handler()
        try:
            return await self._loop(ctx)
        finally:
            if direct:  # no Runner will answer what was sent as the run ended, nor close what it kept
                try:
                    await ctx.release()
                finally:
                    try:
                        await ctx.controls.answer_queued()
                    finally:
                        ctx.let_go()

    def custom_handler(self) -> CustomHandler | None:
        """This executor's ``_handle_custom`` when a subclass overrides it (docs/protocol.md#custom-controls), else None."""
        return self._handle_custom if type(self)._handle_custom is not ExecutorBase._handle_custom else None

    async def _handle_custom(self, msg: ControlMessage, *, session: Session, **kw: Any) -> ControlOutcome:
        """Override to add verbs (docs/protocol.md#custom-controls); fall back to ``dispatch_control``."""
        return await dispatch_control(msg, session=session, **kw)

    async def _loop(self, ctx: RunContext) -> ExecutionOutcome:
        invocations = 0
        try:
            while True:
                await self._boundary(ctx)
                batch = self.next_batch(ctx)
                if not batch:
                    break
                if self.max_task_invocations is not None and invocations + len(batch) > self.max_task_invocations:
                    reason = f"hit max_task_invocations={self.max_task_invocations} with tasks still PENDING"
                    return await self._abort(ctx, reason)
                invocations += len(batch)
                await self._run_batch(ctx, batch)
        except RunCancelled as exc:
            await self._cancel_everything(ctx, exc.reason)
            return await self._abort(ctx, exc.reason)
        return await self._finish(ctx)

    # -- choosing work ---------------------------------------------------------------
    def next_batch(self, ctx: RunContext) -> list[Task]:  # pragma: no cover - abstract
        raise NotImplementedError

    def ready_tasks(self, ctx: RunContext, limit: int | None) -> list[Task]:
        """Up to ``limit`` ready tasks, in topological order."""
        plan = ctx.session.plan
        assert plan is not None
        return self._ready.ready(plan, limit, len(ctx.session.completed_results))

    # -- boundaries ------------------------------------------------------------------
    async def _boundary(self, ctx: RunContext) -> None:
        controls, budget = ctx.controls, ctx.budget
        while True:
            ctx.raise_if_conflicted()
            # Each step is awaited only when it has something to do (checked without an
            # await): the common boundary, with nothing queued, costs no coroutine at all.
            if ctx.pending_rewinds:
                await self._apply_rewinds(ctx)
            if ctx.deferred_drifts:
                await controls.run_ladder()
            if controls.has_work():
                _raise_if_cancelled(await controls.drain())
            if ctx.pending_rewinds or ctx.deferred_drifts:
                continue
            if not ctx.paused:
                # The next task is starting: the steers queued "after this task" are applied
                # now, then the boundary runs again (their replan may rewind, drift, pause).
                if has_queued_notes(ctx.session) and await deliver_queued(ctx):
                    continue
                if (budget.reached is not None or not budget.budget.empty) and await budget.at_boundary():
                    continue  # used up: no task starts, the run paused
                return
            msg = await controls.receive_while_paused()
            if msg is not None:
                _raise_if_cancelled([await controls.handle(msg, mid_task=False)])

    async def _apply_rewinds(self, ctx: RunContext) -> None:
        while ctx.pending_rewinds:
            task_id = ctx.pending_rewinds.pop(0)
            if ctx.session.plan is not None and ctx.session.plan.has_task(task_id):
                await ctx.steerer.rewind(ctx.session, task_id)
                self._ready.reset()

    # -- running a batch ---------------------------------------------------------------
    async def _invoke(self, ctx: RunContext, task: Task) -> InvocationResult | BaseException:
        scope = open_scope(ctx, task.id)  # the model calls inside are this task's
        try:
            if ctx.adapter is None:
                raise GoldfiveError("this run has no agent adapter to invoke")
            # A callable agent may hand back plain text: taken as the task's result.
            result: InvocationResult | str = await ctx.adapter.invoke(task, ctx.session)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: an agent crash fails its task
            log.warning("agent raised on task %s", task.id, exc_info=True)
            return exc
        finally:
            close_scope(scope)
        if isinstance(result, str):
            return InvocationResult(task_id=task.id, text=result)
        return result

    async def _run_batch(self, ctx: RunContext, batch: list[Task]) -> None:
        session, steerer = ctx.session, ctx.steerer
        # The tasks whose turn is open (injected messages park there), in start order.
        ends: dict[str, None] = {}
        exact = _exact(steerer)
        for task in batch:
            if exact:  # (move_task's answer is not needed here: one coroutine less per task)
                await steerer.transition(task.id, S.RUNNING, session=session)
            else:
                await move_task(steerer, session, task.id, S.RUNNING)
            ctx.open_turn(task.id)
            ends[task.id] = None
        if ctx.recording_error:
            # Their start could not be committed: no agent runs unrecorded. The run paused
            # on the failure and waits at the boundary for a RESUME that commits.
            for task in batch:
                del ends[task.id]
                await _end_turn(ctx, task.id)
                await steerer.unstart(session, task.id)
            self._ready.reset()
            return
        if ctx.control is None and len(batch) == 1:
            # Without a channel nothing can interrupt a lone invocation, so it is awaited
            # inline rather than raced in its own task (two loop iterations less per task);
            # cancelling the run still cancels it.
            task = batch[0]
            try:
                await self._settle(ctx, task, await self._invoke(ctx, task))
            finally:
                # The turn ends without a coroutine unless a message was left unread on it.
                if leftover := ctx.close_turn(task.id):
                    await ctx.messages.hand_back(task.id, leftover)
            return
        running: dict[asyncio.Future[Any], Task] = {
            asyncio.create_task(self._invoke(ctx, t), name=f"goldfive-invoke-{t.id}"): t for t in batch
        }
        pending: set[asyncio.Future[Any]] = set(running)
        completions = Completions(running)
        controls = ctx.controls
        steer: Control[Steer] | None = None
        rerun = False
        interrupted: list[str] = []
        try:
            loop = asyncio.get_running_loop()
            while pending:
                # One future, set by whichever comes first: a completion, a control queued, the
                # ladder's intervention (the watchdog's pause, mid-task). Awaited directly, it
                # wakes this task one loop iteration after the event.
                wake: asyncio.Future[None] = loop.create_future()
                completions.wake(wake)
                listening = controls.wake(wake)
                if not wake.done():
                    await wake
                for fut in [f for f in completions.take() if f in pending]:
                    pending.discard(fut)
                    await self._settle(ctx, running[fut], fut.result())
                    # Its turn is over: a message injected now goes to a batch mate still
                    # running, not onto this lane.
                    del ends[running[fut].id]
                    await _end_turn(ctx, running[fut].id)
                msg = controls.take() if listening else None
                from_ladder = msg is None and controls.has_intervention() and pending
                if from_ladder:
                    msg = controls.take_intervention()
                if msg is None:
                    continue
                out = await controls.handle(msg, mid_task=bool(pending), from_ladder=bool(from_ladder))
                if not (out.cancel_run or out.cancel_invocation):
                    continue
                for fut in [f for f in pending if f.done()]:
                    # Ended on its own while the control was handled: not interrupted.
                    pending.discard(fut)
                    await self._settle(ctx, running[fut], fut.result())
                    del ends[running[fut].id]
                    await _end_turn(ctx, running[fut].id)
                interrupted = [running[f].id for f in pending]
                reason = out.cancel_reason if out.cancel_run else ("user_steer" if out.steer is not None else "goldfive_steer")
                await self._cancel_invocations(ctx, pending, running, reason)
                pending.clear()
                if out.cancel_run:
                    raise RunCancelled(out.cancel_reason)
                steer, rerun = out.steer, out.rerun_cancelled
        finally:
            # The run is being torn down (cancelled, or a bug escaped): its invocations end
            # with it instead of being orphaned.
            await cancel_and_wait(pending, timeout=ctx.config.cancel_grace_s)
            # A control queued now stays queued: the boundary handles it first.
            for task_id in ends:
                await _end_turn(ctx, task_id)
        if rerun:
            ctx.pending_rewinds.extend(interrupted)
        if steer is not None:
            await controls.apply_steer(steer, interrupted)

    async def _settle(self, ctx: RunContext, task: Task, result: InvocationResult | BaseException) -> None:
        """Turn an invocation's end into a status; the agent may have reported one already."""
        session, steerer = ctx.session, ctx.steerer
        status = task.status
        plan = session.plan
        if plan is None or plan._by_id.get(task.id) is not task:
            return  # the plan was revised under this invocation
        if status in _TERMINAL:
            if status == S.FAILED:  # reported by the agent: its dependents cannot run either
                await steerer.cascade_cancel_downstream(session, task.id, f"upstream {task.id} failed")
            return
        if isinstance(result, BaseException):
            error = f"agent raised {type(result).__name__}: {result}"
        elif result.error:
            error = str(result.error)
        elif status == S.BLOCKED:
            error = "the agent returned while the task was blocked"
        elif _exact(steerer):  # the common end, without move_task's coroutine
            await steerer.transition(task.id, S.COMPLETED, session=session, detail=result.text)
            return
        else:
            await move_task(steerer, session, task.id, S.COMPLETED, result.text)
            return
        await move_task(steerer, session, task.id, S.FAILED, error)
        await steerer.report_drift(session, DriftEvent(DriftKind.TASK_FAILED_FATAL, DriftSeverity.CRITICAL, error, task.id))
        await steerer.cascade_cancel_downstream(session, task.id, f"upstream {task.id} failed")

    async def _cancel_invocations(
        self, ctx: RunContext, pending: set[asyncio.Future[Any]], running: dict[asyncio.Future[Any], Task], reason: str
    ) -> None:
        """Cancel, give the agents a grace period, abandon the ones that ignore it."""
        grace = ctx.config.cancel_grace_s
        for fut in await cancel_and_wait(pending, timeout=grace):
            detail = f"agent ignored cancellation for {grace:g}s; abandoned"
            await ctx.emit(events.invocation_abandoned, running[fut].id, grace, detail)
        for fut in pending:
            await move_task(ctx.steerer, ctx.session, running[fut].id, S.CANCELLED, reason)

    async def _cancel_everything(self, ctx: RunContext, reason: str) -> None:
        plan = ctx.session.plan
        if plan is None:
            return
        for task in plan.tasks:
            if not task.status.is_terminal:
                await move_task(ctx.steerer, ctx.session, task.id, S.CANCELLED, reason)

    # -- the end -----------------------------------------------------------------------
    async def _finish(self, ctx: RunContext) -> ExecutionOutcome:
        session = ctx.session
        plan = session.plan
        assert plan is not None
        stuck = [t.id for t in plan.tasks if not t.status.is_terminal]
        if stuck:
            return await self._abort(ctx, f"{len(stuck)} task(s) could not run: {', '.join(stuck[:8])}")
        bad = [t.id for t in plan.tasks if t.status in (S.FAILED, S.CANCELLED)]
        if bad:
            return await self._abort(ctx, _failure_summary(session, plan, bad))
        for goal in session.goals:
            if goal.success_predicate is None:
                continue
            try:
                met = bool(goal.success_predicate(session))
            except Exception as exc:  # a raising predicate fails the run, with its reason
                return await self._abort(ctx, f"goal {goal.id} predicate raised {type(exc).__name__}: {exc}")
            if not met:
                return await self._abort(ctx, f"goal {goal.id} predicate not met")
        await ctx.messages.finish()
        summary = f"{plan.counts()[S.COMPLETED]}/{len(plan.tasks)} tasks completed"
        await ctx.emit(events.run_completed, summary)
        return ExecutionOutcome(True, session, summary)

    async def _abort(self, ctx: RunContext, reason: str) -> ExecutionOutcome:
        await ctx.messages.finish()
        await ctx.emit(events.run_aborted, reason)
        return ExecutionOutcome(False, ctx.session, reason)


async def _end_turn(ctx: RunContext, task_id: str) -> None:
    if leftover := ctx.close_turn(task_id):
        await ctx.messages.hand_back(task_id, leftover)


def _exact(steerer: Any) -> bool:
    """Whether ``steerer.transition`` is one ``move_task`` trusts (DefaultSteerer's): then the
    executor, which does not need its answer, calls it directly."""
    return getattr(type(steerer), "transition", None) in EXACT_TRANSITIONS


def _raise_if_cancelled(outcomes: list[ControlOutcome]) -> None:
    for out in outcomes:
        if out.cancel_run:
            raise RunCancelled(out.cancel_reason)


def _failure_summary(session: Session, plan: Plan, bad: list[str]) -> str:
    failed = [t.id for t in plan.tasks if t.status == S.FAILED]
    what = f"task(s) failed: {', '.join(failed[:8])}" if failed else f"task(s) cancelled: {', '.join(bad[:8])}"
    first_reason = session.state.get(FAILURE_REASONS, {}).get(failed[0], "") if failed else ""
    if first_reason:  # e.g. the unreachable model server's URL
        what += f" ({failed[0]}: {first_reason})"
    return what
