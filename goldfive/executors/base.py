"""The execution loop both executors share: boundaries, batches, the control race.

A *boundary* is the moment between tasks: queued controls are handled, rewinds and drifts
reported by tools are applied, and a paused run blocks on the channel. A *batch* is the set of
tasks started together (one for SequentialExecutor, a topological stage for
ParallelDAGExecutor); while it runs, the channel is raced against the agents with
``asyncio.wait(..., FIRST_COMPLETED)``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from goldfive import events
from goldfive.control import AckResult, ControlAck, ControlMessage, kind_name
from goldfive.executors._control import ControlOutcome, dispatch_control, drain_controls, publish_ack
from goldfive.executors._ready import ReadyFrontier
from goldfive.executors._receiver import Receiver
from goldfive.inbox import InjectedMessage
from goldfive.results import ExecutionOutcome, InvocationResult
from goldfive.runtime import RunContext, RuntimeConfig
from goldfive.steerer import FAILURE_REASONS
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Plan, Session, Task, TaskStatus

log = logging.getLogger("goldfive.executor")

S = TaskStatus


class RunCancelled(Exception):
    """Internal: a CANCEL (or an expired escalation) ends the run."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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

    # -- the spec's entry point ----------------------------------------------------
    async def run(
        self,
        *,
        plan: Plan,
        session: Session,
        adapter: Any,
        steerer: Any,
        planner: Any,
        sinks: list[Any],
        control: Any = None,
    ) -> ExecutionOutcome:
        ctx = getattr(session, "_runtime", None)
        direct = ctx is None
        if ctx is None:  # used directly, without a Runner
            ctx = RunContext(session, sinks=sinks, steerer=steerer, planner=planner, adapter=adapter, control=control)
            ctx.user_tools = list(getattr(adapter, "user_tools", []) or [])
        if session.plan is None:
            session.plan = plan
        if self.cancel_grace_s is not None:
            ctx.config = RuntimeConfig(
                cancel_grace_s=self.cancel_grace_s,
                approval_default_timeout_ms=ctx.config.approval_default_timeout_ms,
                max_note_bytes=ctx.config.max_note_bytes,
            )
        rx = ctx._receiver = Receiver(ctx.control)  # type: ignore[attr-defined]
        try:
            return await self._loop(ctx)
        finally:
            late = await rx.stop()
            if late is not None and direct and ctx.control is not None:
                # No Runner to answer it: its one ack comes from here.
                await ctx.control.ack(
                    ControlAck(late.id, AckResult.FAILURE, f"run not active: {kind_name(late.kind)} arrived as the run ended")
                )
            elif late is not None:  # taken as the run ended: the Runner acks it "run not active"
                ctx.late_messages.append(late)

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
        while True:
            await self._apply_rewinds(ctx)
            await self._handle_deferred_drifts(ctx)
            await self._raise_if_cancelled(await drain_controls(self, ctx))
            if ctx.pending_rewinds or ctx.deferred_drifts:
                continue
            if not ctx.paused:
                return
            msg = await self._receive_while_paused(ctx)
            if msg is not None:
                await self._raise_if_cancelled([await self.handle_control(ctx, msg, mid_task=False)])

    async def _receive_while_paused(self, ctx: RunContext) -> ControlMessage | None:
        if ctx.control is None or ctx.control.closed and ctx.control.pending() == 0:
            if ctx.pause_deadline is not None:
                raise RunCancelled("escalated for a human decision, but the control channel is closed")
            # Nobody can resume a run whose channel is gone: carry on rather than wedge, and say so.
            ctx.paused = ctx.session.paused = False
            await ctx.steerer.report_drift(
                ctx.session,
                DriftEvent(DriftKind.CUSTOM, DriftSeverity.INFO, "control channel closed while paused; resuming"),
            )
            return None
        timeout = None
        if ctx.pause_deadline is not None:
            timeout = ctx.pause_deadline - time.monotonic()
            if timeout <= 0:
                raise RunCancelled("escalation deadline expired without a human decision")
        rx = _receiver(ctx)
        recv = rx.arm()
        if recv is not None:
            await asyncio.wait({recv}, timeout=timeout)
        msg = rx.take()
        if msg is None and ctx.pause_deadline is not None and time.monotonic() >= ctx.pause_deadline:
            raise RunCancelled("escalation deadline expired without a human decision")
        return msg

    async def _raise_if_cancelled(self, outcomes: list[ControlOutcome]) -> None:
        for out in outcomes:
            if out.cancel_run:
                raise RunCancelled(out.cancel_reason)

    async def _apply_rewinds(self, ctx: RunContext) -> None:
        while ctx.pending_rewinds:
            task_id = ctx.pending_rewinds.pop(0)
            if ctx.session.plan is not None and ctx.session.plan.has_task(task_id):
                await ctx.steerer.rewind(ctx.session, task_id)
                self._ready.reset()

    async def _handle_deferred_drifts(self, ctx: RunContext) -> None:
        while ctx.deferred_drifts:
            drift = ctx.deferred_drifts.pop(0)
            await ctx.steerer.handle_drift(ctx.session, drift, emit=False)

    # -- controls ----------------------------------------------------------------------
    def _take_received(self, ctx: RunContext) -> ControlMessage | None:
        """A message the run's pending receive already took (``drain_controls`` asks first)."""
        return _receiver(ctx).take()

    async def _handle_custom(self, msg: ControlMessage, *, session: Session, **kw: Any) -> ControlOutcome:
        """Override to add verbs (spec 7.b); fall back to ``dispatch_control``."""
        return await dispatch_control(msg, session=session, **kw)

    async def handle_control(self, ctx: RunContext, msg: ControlMessage, *, mid_task: bool) -> ControlOutcome:
        """Record, dispatch, ack, then apply the effect. Exactly one ack per message."""
        await ctx.emit(events.control_received, msg)
        try:
            outcome = await self._handle_custom(msg, session=ctx.session, mid_task=mid_task, ctx=ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: a broken handler still acks
            log.exception("control handler failed")
            from goldfive.control import AckResult, ControlAck

            outcome = ControlOutcome(ack=ControlAck(msg.id, AckResult.FAILURE, f"handler error: {exc}"))
        await publish_ack(ctx, msg, outcome.ack)
        try:
            await outcome.apply()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: the ack is out, so the failure is an event
            log.exception("control effect failed")
            detail = f"effect of {kind_name(msg.kind)} {msg.id} failed after its ack: {type(exc).__name__}: {exc}"
            await ctx.emit(
                events.drift_detected, DriftEvent(DriftKind.CUSTOM, DriftSeverity.WARNING, detail, ctx.session.current_task_id)
            )
        if outcome.steer_message is not None and not outcome.cancel_invocation:
            await self._apply_steer(ctx, outcome.steer_message, interrupted=[])
        return outcome

    async def _apply_steer(self, ctx: RunContext, msg: ControlMessage, interrupted: list[str]) -> None:
        """USER_STEER: drift, then delete-and-replan. If the planner fails, the interrupted
        tasks run again and the note reaches their agent as an injected message."""
        session = ctx.session
        ctx.paused = session.paused = False
        ctx.pause_deadline = None
        drift = await ctx.steerer.observe(msg, session)
        if drift is None:
            return
        if interrupted and not drift.task_id:
            drift = DriftEvent(drift.kind, drift.severity, drift.detail, interrupted[0], drift.annotation_id, drift.id, drift.metadata)
        outcome = await ctx.steerer.handle_drift(session, drift)
        if outcome.revised:
            self._ready.reset()
            return
        for tid in interrupted:
            if session.plan is not None and session.plan.has_task(tid):
                ctx.pending_rewinds.append(tid)
        note = str(msg.payload.get("note", ""))
        await ctx.inject(InjectedMessage(text=note, role="user", control_id=msg.id))

    # -- running a batch ---------------------------------------------------------------
    async def _invoke(self, ctx: RunContext, task: Task) -> InvocationResult | BaseException:
        try:
            result = await ctx.adapter.invoke(task, ctx.session)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: an agent crash fails its task
            log.warning("agent raised on task %s", task.id, exc_info=True)
            return exc
        if isinstance(result, str):
            return InvocationResult(task_id=task.id, text=result)
        return result

    async def _run_batch(self, ctx: RunContext, batch: list[Task]) -> None:
        session, steerer = ctx.session, ctx.steerer
        ends = {}
        for task in batch:
            await steerer.transition(session, task.id, S.RUNNING)
            ends[task.id] = await ctx.begin_turn(task.id)
        if ctx.control is None and len(batch) == 1:
            # Without a channel nothing can interrupt a lone invocation, so it is awaited
            # inline rather than raced in its own task (two loop iterations less per task);
            # cancelling the run still cancels it.
            task = batch[0]
            try:
                await self._settle(ctx, task, await self._invoke(ctx, task))
            finally:
                await ends[task.id]()
            return
        running = {asyncio.create_task(self._invoke(ctx, t), name=f"goldfive-invoke-{t.id}"): t for t in batch}
        pending = set(running)
        rx = _receiver(ctx)
        steer: ControlMessage | None = None
        rerun = False
        cancel_reason = ""
        interrupted: list[str] = []
        try:
            while pending:
                recv = rx.arm()
                done, _ = await asyncio.wait(pending | ({recv} if recv else set()), return_when=asyncio.FIRST_COMPLETED)
                for fut in [f for f in done if f in pending]:
                    pending.discard(fut)
                    await self._settle(ctx, running[fut], fut.result())
                    # Its turn is over: a message injected now goes to a batch mate still
                    # running, not onto this lane.
                    await ends.pop(running[fut].id)()
                if recv is not None and recv in done:
                    msg = rx.take()
                    if msg is None:
                        continue
                    out = await self.handle_control(ctx, msg, mid_task=bool(pending))
                    if out.cancel_run or out.cancel_invocation:
                        for fut in [f for f in pending if f.done()]:
                            # Ended on its own while the control was handled: not interrupted.
                            pending.discard(fut)
                            await self._settle(ctx, running[fut], fut.result())
                            await ends.pop(running[fut].id)()
                        interrupted = [running[f].id for f in pending]
                        cancel_reason = out.cancel_reason if out.cancel_run else ("user_steer" if out.steer_message else "goldfive_steer")
                        await self._cancel_invocations(ctx, pending, running, cancel_reason)
                        pending.clear()
                        if out.cancel_run:
                            raise RunCancelled(out.cancel_reason)
                        steer = out.steer_message
                        rerun = out.rerun_cancelled
        finally:
            if pending:
                # The run is being torn down (cancelled, or a bug escaped): its invocations
                # end with it instead of being orphaned.
                for fut in pending:
                    fut.cancel()
                    fut.add_done_callback(_consume)
                await asyncio.wait(pending, timeout=ctx.config.cancel_grace_s)
            # The receive stays armed: what it takes next is handled at the boundary, first.
            for end in ends.values():
                await end()
        if rerun:
            ctx.pending_rewinds.extend(interrupted)
        if steer is not None:
            await self._apply_steer(ctx, steer, interrupted)

    async def _settle(self, ctx: RunContext, task: Task, result: InvocationResult | BaseException) -> None:
        """Turn an invocation's end into a status; the agent may have reported one already."""
        session, steerer = ctx.session, ctx.steerer
        status = task.status
        if session.plan is None or not session.plan.has_task(task.id) or session.plan.task(task.id) is not task:
            return  # the plan was revised under this invocation
        if status.is_terminal:
            if status == S.FAILED:  # reported by the agent: its dependents cannot run either
                await steerer.cascade_cancel_downstream(session, task.id, f"upstream {task.id} failed")
            return
        error = ""
        if isinstance(result, BaseException):
            error = f"agent raised {type(result).__name__}: {result}"
        elif result.error:
            error = result.error
        elif status == S.BLOCKED:
            error = "the agent returned while the task was blocked"
        if not error:
            await steerer.transition(session, task.id, S.COMPLETED, result=result.text)  # type: ignore[union-attr]
            return
        await steerer.transition(session, task.id, S.FAILED, reason=error)
        await steerer.report_drift(session, DriftEvent(DriftKind.TASK_FAILED_FATAL, DriftSeverity.CRITICAL, error, task.id))
        await steerer.cascade_cancel_downstream(session, task.id, f"upstream {task.id} failed")

    async def _cancel_invocations(
        self, ctx: RunContext, pending: set[asyncio.Task[Any]], running: dict[asyncio.Task[Any], Task], reason: str
    ) -> None:
        """Cancel, give the agents a grace period, abandon the ones that ignore it."""
        for fut in pending:
            fut.cancel()
        grace = ctx.config.cancel_grace_s
        if pending:
            done, stuck = await asyncio.wait(pending, timeout=grace)
            for fut in stuck:
                fut.add_done_callback(_consume)
                await ctx.emit(
                    events.invocation_abandoned,
                    running[fut].id,
                    grace,
                    f"agent ignored cancellation for {grace:g}s; abandoned",
                )
        for fut in pending:
            await ctx.steerer.transition(ctx.session, running[fut].id, S.CANCELLED, reason=reason)

    async def _cancel_everything(self, ctx: RunContext, reason: str) -> None:
        plan = ctx.session.plan
        if plan is None:
            return
        for task in plan.tasks:
            if not task.status.is_terminal:
                await ctx.steerer.transition(ctx.session, task.id, S.CANCELLED, reason=reason)

    # -- the end -----------------------------------------------------------------------
    async def _finish(self, ctx: RunContext) -> ExecutionOutcome:
        session = ctx.session
        plan = session.plan
        assert plan is not None
        counts = plan.counts()
        stuck = [t.id for t in plan.tasks if not t.status.is_terminal]
        bad = [t.id for t in plan.tasks if t.status in (S.FAILED, S.CANCELLED)]
        if stuck:
            return await self._abort(ctx, f"{len(stuck)} task(s) could not run: {', '.join(stuck[:8])}")
        if bad:
            failed = [t.id for t in plan.tasks if t.status == S.FAILED]
            what = f"task(s) failed: {', '.join(failed[:8])}" if failed else f"task(s) cancelled: {', '.join(bad[:8])}"
            first_reason = session.state.get(FAILURE_REASONS, {}).get(failed[0], "") if failed else ""
            if first_reason:  # e.g. the unreachable model server's URL
                what += f" ({failed[0]}: {first_reason})"
            return await self._abort(ctx, what)
        for goal in session.goals:
            if goal.success_predicate is None:
                continue
            try:
                met = bool(goal.success_predicate(session))
            except Exception as exc:  # a raising predicate fails the run, with its reason
                return await self._abort(ctx, f"goal {goal.id} predicate raised {type(exc).__name__}: {exc}")
            if not met:
                return await self._abort(ctx, f"goal {goal.id} predicate not met")
        await ctx.finish_messages()
        summary = f"{counts[S.COMPLETED]}/{len(plan.tasks)} tasks completed"
        await ctx.emit(events.run_completed, summary)
        return ExecutionOutcome(True, session, summary)

    async def _abort(self, ctx: RunContext, reason: str) -> ExecutionOutcome:
        await ctx.finish_messages()
        await ctx.emit(events.run_aborted, reason)
        return ExecutionOutcome(False, ctx.session, reason)


def _consume(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()


def _receiver(ctx: RunContext) -> Receiver:
    rx = getattr(ctx, "_receiver", None)
    if rx is None:  # a subclass driving _run_batch outside run()
        rx = ctx._receiver = Receiver(ctx.control)  # type: ignore[attr-defined]
    return rx
