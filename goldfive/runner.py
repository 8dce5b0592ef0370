"""Runner: the single entry point. Composes the six primitives and runs one invocation.

Lifecycle (docs/protocol.md#the-runs-lifecycle): setup (RunStarted), goal derivation
(GoalDerived), plan generation (PlanSubmitted), execution (the executor), termination
(RunCompleted / RunAborted, always the last event of the run), sink teardown.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from goldfive import events
from goldfive.aio import cancel_and_wait
from goldfive.control import ControlChannel
from goldfive.errors import GoldfiveError
from goldfive.executors.base import ExecutorBase
from goldfive.executors.sequential import SequentialExecutor
from goldfive.goals import PassthroughGoalDeriver
from goldfive.planners.static import PassthroughPlanner
from goldfive.protocols import move_task
from goldfive.results import ExecutionOutcome
from goldfive.budget.model import Budget
from goldfive.run.config import RuntimeConfig
from goldfive.run.defaults import run_defaults
from goldfive.run.context import RunContext
from goldfive.run.current_run import running
from goldfive.run.control_loop import RunCancelled
from goldfive.steerer import DefaultSteerer
from goldfive.types import Goal, Plan, Session, TaskStatus
from goldfive.usage.model import Purpose
from goldfive.usage.report import usage_scope

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.durable.recover import Recovered

log = logging.getLogger("goldfive.runner")


def _records_to(sink: Any, store: str | os.PathLike[str]) -> bool:
    """Whether ``sink`` is a durable recorder (it holds run locks) writing to the file ``store``."""
    from goldfive.store.locks import RunRecording

    return isinstance(sink, RunRecording) and isinstance(sink.path, str) and os.path.realpath(sink.path) == os.path.realpath(store)


def _input_problem(user_input: object) -> str:
    """Why ``user_input`` cannot start a run ("" when it can: a str, a list of Goal, or None
    for a resuming run)."""
    if user_input is None or isinstance(user_input, str):
        return ""
    if isinstance(user_input, list):
        wrong = next((x for x in user_input if not isinstance(x, Goal)), None)
        if wrong is None:
            return ""
        return f"run() takes the user's input as a str or a list of Goal, not a list holding {type(wrong).__name__}"
    return f"run() takes the user's input as a str or a list of Goal, not {type(user_input).__name__}"


def _as_adapter(agent: Any) -> Any:
    from goldfive.adapters.frameworks import adapter_for

    return adapter_for(agent)


class Runner:
    def __init__(
        self,
        agent: Any,
        planner: Any = None,
        executor: Any = None,
        goal_deriver: Any = None,
        steerer: Any = None,
        sinks: Iterable[Any] | None = None,
        control: ControlChannel | None = None,
        *,
        config: RuntimeConfig | None = None,
        session_id: str = "",
        run_id: str | None = None,
        clock: Callable[[], int] | None = None,
        launch: dict[str, Any] | None = None,
        hub: str | Sequence[str] | None = None,
        hub_token: str | None = None,
        hub_tls_ca: str | os.PathLike[str] | None = None,
        hub_shared: bool = True,
        budget: Budget | None = None,
    ) -> None:
        self.adapter = _as_adapter(agent)
        self.planner = planner if planner is not None else PassthroughPlanner()
        self.executor = executor if executor is not None else SequentialExecutor()
        self.goal_deriver = goal_deriver if goal_deriver is not None else PassthroughGoalDeriver("run")
        self.steerer = steerer if steerer is not None else DefaultSteerer()
        self.sinks = list(sinks or [])
        self.control = control
        self.config = config or RuntimeConfig()
        if budget is not None:  # how much the run may use before it pauses and asks
            if not isinstance(budget, Budget):
                raise TypeError(f"budget must be a goldfive.Budget, got {type(budget).__name__}")
            self.config = replace(self.config, budget=budget)
        self._session_id = session_id
        self._run_id = run_id
        self._clock = clock
        #: How this run was launched, recorded in RunStarted so ``goldfive resume`` can build
        #: it again (JSON-serialisable: the agent's MODULE:FUNCTION, the plan file, ...).
        self.launch = dict(launch or {})
        #: Set by ``Runner.resuming``: the recorded state this run continues from, and the
        #: sink that records it (the others are shown the recorded history first).
        self._recovered: Recovered | None = None
        self._recorder: Any = None
        self._sinks_closed = False
        self._responder: asyncio.Task[None] | None = None
        self._suspending = False
        self.session: Session | None = None
        #: The run this Runner ran (or runs), once ``run()`` began: its RunContext. Code the
        #: run calls reaches it as ``goldfive.run.current()``.
        self.context: RunContext | None = None
        #: After run(): how many durable commits of its recording failed, and why the last
        #: one did if no later RESUME found writing works again ("" then).
        self.recording_failures = 0
        self.recording_error = ""
        if hub is not None:  # registered with a hub: events go up, its controls come down
            from goldfive.link.runner import hub_link

            self.control, link = hub_link(hub, self.control, token=hub_token, tls_ca=hub_tls_ca, shared=hub_shared)
            self.sinks.append(link)

    @classmethod
    def resuming(
        cls,
        run_id: str,
        *,
        store: str | os.PathLike[str],
        durability: str = "normal",
        sinks: Iterable[Any] | None = None,
        **kwargs: Any,
    ) -> Runner:
        """A Runner that continues run ``run_id`` (an id or a unique prefix) recorded in the
        SQLite file ``store``; ``await runner.run()`` goes on where the recording stops.

        Takes the same agent, planner and other arguments as ``Runner(...)``. Raises
        ResumeRefused (one line, nothing written) for a run that ended, a plan or agent that
        does not match the recording, or a run another live process is running."""
        from goldfive.durable.resume import load_for_resume
        from goldfive.sinks.sqlite import SQLitePersistenceSink

        given = list(sinks or [])
        recorder = next((x for x in given if _records_to(x, store)), None)
        if recorder is None:
            if not os.path.isfile(store):  # a sink would create it
                load_for_resume(store, run_id)
            recorder = SQLitePersistenceSink(store, durability=durability)
        others = [x for x in given if x is not recorder]
        runner = cls(sinks=[recorder, *others], **kwargs)
        try:
            runner.continue_from(store, run_id, durability=durability)
        except GoldfiveError:
            if isinstance(recorder, SQLitePersistenceSink) and recorder not in given:
                recorder._release()
            raise
        return runner

    def continue_from(self, store: str | os.PathLike[str], run_id: str, *, durability: str = "normal") -> None:
        """Make this (not yet run) Runner continue run ``run_id`` from ``store`` instead of
        starting anew; its sinks must include a recorder for ``store``. For front-ends that
        build a Runner with a factory (``goldfive serve`` resuming its runs after a restart).
        The recorder holds the run's lock from here on (RunLocked when a live process does)."""
        from goldfive.durable.resume import check_matches, load_for_resume

        if self.session is not None:
            raise GoldfiveError("this Runner already ran; continue_from goes before run()")
        recorder = next((x for x in self.sinks if _records_to(x, store)), None)
        if recorder is None:
            raise GoldfiveError(f"none of this Runner's sinks records to {os.fspath(store)}: the resumed run would not be kept")
        if getattr(recorder, "durability", "") == "batched":
            recorder.durability = durability
        # The recorder takes the run's lock before the recording is read (one transaction):
        # a second process resuming the same run is refused here, before anything runs.
        rec = load_for_resume(store, run_id, hold=recorder)
        try:
            check_matches(rec, self.planner, self.adapter)
        except BaseException:
            recorder.release_run(rec.run_id)
            raise
        self._run_id, self._session_id = rec.run_id, rec.session_id
        self._recovered = rec
        self._recorder = recorder

    def continue_from_events(self, run_id: str, history: Iterable[Any], *, holder: Any = None) -> None:
        """Make this (not yet run) Runner continue run ``run_id`` from ``history``, its
        recorded events in sequence order (0..last, gap-free), instead of starting anew: the
        run's next event is last+1 (RunResumed), a task the stop cut off runs again (its
        attempt says so) and a completed one never does; a run stopped before it had a plan
        gets its goals and plan made again. For a runner whose process died while the record
        lives elsewhere (a hub: :func:`goldfive.durable.from_hub.history_from_hub`).

        ``holder`` is the sink that already holds that history (the run's HubLink): it is not
        sent the history again; other sinks with ``subscribe`` (watchers) are shown it first.
        Raises ResumeRefused (one line) for an empty history, a run that ended, or one whose
        plan or agent does not match this Runner's."""
        from goldfive.durable.recover import recover
        from goldfive.durable.resume import ResumeRefused, check_matches, check_resumable

        if self.session is not None:
            raise GoldfiveError("this Runner already ran; continue_from_events goes before run()")
        events = list(history)
        for expect, ev in enumerate(events):
            if ev.sequence != expect or ev.run_id != run_id:
                raise ResumeRefused(
                    f"the history of run {run_id} is not gap-free from 0: event {expect} is "
                    f"{ev.run_id!r}'s sequence {ev.sequence}"
                )
        if not events:
            raise ResumeRefused(f"run {run_id} has no recorded event: start it instead")
        rec = recover(run_id, events)
        if rec.ended:
            check_resumable(rec)  # refuses, saying how it ended
        if rec.plan is not None:
            check_matches(rec, self.planner, self.adapter)
        self._run_id, self._session_id = rec.run_id, rec.session_id
        self._recovered = rec
        self._recorder = holder

    @classmethod
    async def resume(cls, run_id: str, *, store: str | os.PathLike[str], **kwargs: Any) -> ExecutionOutcome:
        """Continue run ``run_id`` from ``store`` to its end (see ``resuming``), then close."""
        runner = cls.resuming(run_id, store=store, **kwargs)
        try:
            return await runner.run()
        finally:
            await runner.close()

    async def run(self, user_input: str | list[Goal] | None = None) -> ExecutionOutcome:
        """One run, end to end. A Runner runs once: its sinks are closed when the run ends and
        it keeps answering late controls on its channel until ``close()``. A resuming Runner
        takes no input: it goes on from its recording."""
        if self.session is not None:
            raise GoldfiveError(
                "this Runner already ran (its sinks are closed and its channel answers the ended run); "
                "build a new Runner for another run"
            )
        run_id = self._run_id or uuid.uuid4().hex
        kw: dict[str, Any] = {"clock": self._clock} if self._clock else {}
        session = Session(run_id=run_id, session_id=self._session_id, **kw)
        self.session = session
        ctx = RunContext(
            session,
            sinks=self.sinks,
            steerer=self.steerer,
            planner=self.planner,
            adapter=self.adapter,
            control=self.control,
            config=self.config,
        )
        self.context = ctx
        if isinstance(self.executor, ExecutorBase):  # its custom (docs/protocol.md#custom-controls) verbs work from the start
            ctx.controls.custom = self.executor.custom_handler()
        if self._recovered is None and user_input is None:
            raise GoldfiveError("run() needs the user's input (a resuming Runner is made with Runner.resuming)")
        refused = _input_problem(user_input)
        if refused or user_input is None:
            text = ""
        else:
            text = user_input if isinstance(user_input, str) else "; ".join(g.summary for g in user_input)
        session.user_input = text
        # The run is the current run of everything it starts, and of nothing after it returns.
        with running(ctx):
            return await self._run(ctx, user_input, text, refused)

    async def _run(self, ctx: RunContext, user_input: str | list[Goal] | None, text: str, refused: str) -> ExecutionOutcome:
        session = ctx.session
        try:
            try:
                try:
                    if self._recovered is not None and self._recovered.plan is None:
                        outcome = await self._replan(ctx, self._recovered)
                    elif self._recovered is not None:
                        outcome = await self._continue(ctx, self._recovered)
                    else:
                        await ctx.emit(events.run_started, goal_summary=text, user_input=text, launch_json=self._launch_json())
                        if not ctx.budget.budget.empty:  # recorded: views show it, resume keeps it
                            author = self.config.budget_author if self.config.budget is not None else ""
                            await ctx.emit(events.budget_changed, ctx.budget.budget, author)
                        assert user_input is not None
                        if refused:  # a run that cannot start still ends as a run, with the reason
                            outcome = await self._abort(ctx, refused)
                        else:
                            outcome = await self._setup(ctx, user_input)
                except RunCancelled as exc:  # a CANCEL while the goals or the plan were made
                    await self._abandon(ctx, exc.reason)
                    outcome = await self._abort(ctx, exc.reason)
                if outcome is None:
                    outcome = await self._execute(ctx)
            except BaseException as exc:
                if self._suspending and isinstance(exc, asyncio.CancelledError):
                    raise  # this process stops, not the run: nothing marks it ended (see suspend)
                # The sinks still learn how the run ended before the exception propagates.
                reason = "run cancelled" if isinstance(exc, asyncio.CancelledError) else f"{type(exc).__name__}: {exc}"
                try:
                    await self._abandon(ctx, reason)
                    await ctx.emit(events.run_aborted, reason)
                except Exception:  # the original exception is the one to raise; say this one
                    log.exception("could not record the end of run %s (%s)", session.run_id, reason)
                raise
        finally:
            self.recording_failures, self.recording_error = ctx.recording_failures, ctx.recording_error
            self._start_responder(ctx)
            try:
                await ctx.release()
            finally:
                try:
                    await self._close_sinks()
                finally:
                    ctx.let_go()
        return outcome

    def suspend(self) -> None:
        """Make the next cancellation of ``run()`` a stop of this process, not of the run.

        A server that stops gracefully (Ctrl+C, SIGTERM) calls this before cancelling its
        runs: no RunAborted is recorded and what was emitted is written out, so the run stays
        interrupted in its recording, exactly as a killed process leaves it, and is continued
        from there (``Runner.continue_from``) by the next start. A CANCEL control still
        cancels the run."""
        self._suspending = True

    async def _setup(self, ctx: RunContext, user_input: str | list[Goal]) -> ExecutionOutcome | None:
        session = ctx.session
        try:
            if isinstance(user_input, list):
                goals = list(user_input)
            else:
                with usage_scope(ctx, purpose=Purpose.GOALS):
                    derived = self.goal_deriver.derive(user_input, context={"run_id": session.run_id})
                    goals = list(await ctx.controls.responsive(derived, "goal derivation"))
        except RunCancelled:
            raise
        except GoldfiveError as exc:
            return await self._abort(ctx, f"goal derivation failed: {exc}")
        except Exception as exc:  # isolation boundary: a deriver bug ends the run with a reason
            return await self._abort(ctx, f"goal derivation failed: {type(exc).__name__}: {exc}")
        session.goals = goals
        session.state["goldfive.goals_summary"] = "; ".join(g.summary for g in goals)
        await ctx.emit(events.goal_derived, goals)
        try:
            with usage_scope(ctx, purpose=Purpose.PLAN):
                made = self.planner.generate(
                    goals=goals,
                    available_agents=list(self.adapter.available_agents),
                    context={"run_id": session.run_id, "user_input": session.user_input},
                )
                plan = await ctx.controls.responsive(made, "planning")
        except RunCancelled:
            raise
        except Exception as exc:  # isolation boundary: planner failure ends the run with a reason
            return await self._abort(ctx, f"planner failed: {exc}")
        if plan is None:
            return await self._abort(ctx, "planner returned no plan")
        if not isinstance(plan, Plan):
            return await self._abort(ctx, f"planner returned {type(plan).__name__}, not a Plan")
        try:
            plan.validate()
        except GoldfiveError as exc:
            return await self._abort(ctx, f"planner returned an invalid plan: {exc}")
        if not plan.run_id:
            plan = plan.for_run(session.run_id)
        session.plan = plan
        session.state["goldfive.current_plan_id"] = plan.id
        await ctx.emit(events.plan_submitted, plan)
        await ctx.controls.apply_deferred_steers()
        return None

    def _launch_json(self) -> str:
        return json.dumps(self.launch, sort_keys=True) if self.launch else ""

    async def _show_history(self, rec: Recovered) -> None:
        for sink in self.sinks:  # a watcher (a sink people subscribe to) sees the run from its start
            if sink is not self._recorder and callable(getattr(sink, "subscribe", None)):
                for ev in rec.history:
                    await sink.emit(ev)
        rec.history = []  # not kept for the run's life

    async def _continue(self, ctx: RunContext, rec: Recovered) -> ExecutionOutcome | None:
        """Resume: the recorded state goes back in, RunResumed marks it, the run goes on."""
        from goldfive.durable.resume import install

        ctx.usage.seed(rec.history)  # the totals go on from the recording's
        await self._show_history(rec)
        await install(ctx, rec)
        await self._seed_budget(ctx, rec)
        if rec.cancel_reason:  # a CANCEL was acked before the stop: it still holds
            raise RunCancelled(rec.cancel_reason)
        return None

    async def _replan(self, ctx: RunContext, rec: Recovered) -> ExecutionOutcome | None:
        """Resume a run stopped before it had a plan: after RunResumed, its goals and plan are
        made again from its recorded input (nothing ran yet, so nothing runs twice)."""
        ctx.usage.seed(rec.history)
        await self._show_history(rec)
        ctx.session.continue_after(rec.last_sequence)
        ctx.session.user_input = rec.user_input
        if rec.paused:
            ctx.pause()
        await ctx.emit(
            events.run_resumed,
            resumed_after_sequence=rec.last_sequence,
            resume_count=rec.resume_count + 1,
            paused=rec.paused,
            detail="stopped before it had a plan: its goals and plan are made again",
        )
        await self._seed_budget(ctx, rec)
        if rec.cancel_reason:
            raise RunCancelled(rec.cancel_reason)
        return await self._setup(ctx, rec.user_input)

    async def _seed_budget(self, ctx: RunContext, rec: Recovered) -> None:
        """The budget survives the stop: the recorded one (or the one this Runner was given),
        with the tool calls and time already spent; a run it held paused is held again."""
        given = self.config.budget
        if given is None and rec.budget is None:
            given = run_defaults().budget  # recorded none: the process's default applies
        if ctx.budget.seed(rec.budget, tool_calls=rec.tool_calls, ran_s=rec.ran_s, paused=rec.paused, given=given):
            author = self.config.budget_author if self.config.budget is not None else ""
            await ctx.emit(events.budget_changed, ctx.budget.budget, author)

    async def _execute(self, ctx: RunContext) -> ExecutionOutcome:
        if isinstance(self.executor, ExecutorBase):
            return await self.executor.run(ctx)
        # A user's own executor implements the spec's Executor protocol (keywords); it finds
        # the same RunContext as ``goldfive.run.current()``.
        result: ExecutionOutcome = await self.executor.run(
            plan=ctx.session.plan,
            session=ctx.session,
            adapter=self.adapter,
            steerer=self.steerer,
            planner=self.planner,
            sinks=self.sinks,
            control=self.control,
        )
        return result

    async def _abandon(self, ctx: RunContext, reason: str) -> None:
        """The run is ending by an exception: unfinished tasks are CANCELLED and undelivered
        injected messages reported, as a CANCEL control would do."""
        plan = ctx.session.plan
        if ctx.ended or plan is None:
            return
        for task in plan.tasks:
            if not task.status.is_terminal:
                await move_task(self.steerer, ctx.session, task.id, TaskStatus.CANCELLED, reason)
        await ctx.messages.finish()

    async def _abort(self, ctx: RunContext, reason: str) -> ExecutionOutcome:
        await ctx.emit(events.run_aborted, reason)
        return ExecutionOutcome(False, ctx.session, reason)

    # -- after the run -----------------------------------------------------------
    def _start_responder(self, ctx: RunContext) -> None:
        """Controls that arrive after the run ended still get their one ack (FAILURE)."""
        if self.control is None or (self._responder is not None and not self._responder.done()):
            return
        # In a context of its own: the run's binds the run, and this task lives as long as the
        # channel (its wait is in the channel's queue), which a user may keep and never close.
        self._responder = asyncio.get_running_loop().create_task(
            ctx.controls.answer_after_end(), context=contextvars.Context()
        )

    async def _close_sinks(self) -> None:
        if self._sinks_closed:
            return
        self._sinks_closed = True
        from goldfive.sinks.fanout import close_all

        await close_all(self.sinks)

    async def close(self) -> None:
        """Close the sinks (if the run did not already) and stop answering late controls.

        The control channel is closed too: nobody reads it any more, so a later ``send``
        raises ChannelClosedError instead of waiting forever, anything still queued is acked
        FAILURE, and ``acks()`` ends."""
        if self._responder is not None:
            await cancel_and_wait([self._responder])
            responder, self._responder = self._responder, None
            if not responder.cancelled():
                responder.result()  # a responder that failed still says so
        if self.control is not None and self.session is not None:
            self.control.close()
            await self.control.refuse_pending("run not active: the runner was closed")
        await self._close_sinks()

