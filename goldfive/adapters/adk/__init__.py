"""ADKAdapter: steer a Google ADK agent as it is (``pip install 'goldfive[adk]'``).

A goldfive task is one ADK invocation, ``Runner.run_async`` with the task's input
(:func:`goldfive.adapters.common.task_input`) as the user message; the task's result is the
invocation's final text. Each goldfive run has its own ADK session (in the adapter's
``InMemorySessionService``), kept from task to task (its first task's input carries the goals,
the plan and the results, a later task's only what changed since); two tasks of one run that run at the same
time (the parallel executor) each get a session of their own, since an ADK session holds one
invocation at a time.

The agent itself is not changed: the Runner runs a clone (``BaseAgent.clone``) whose tools are
the agent's tools plus goldfive's eight reporting tools, and the plugin of
:mod:`goldfive.adapters.adk._hooks` does the rest (injected messages, the event log).

Tool approval is ADK's tool confirmation (``FunctionTool(f, require_confirmation=...)`` or a tool
calling ``tool_context.request_confirmation()``): the invocation pauses on its
``adk_request_confirmation`` calls, each is asked of the person under the id of the call it
confirms (parallel calls: one approval each, all asked at once), and the invocation resumes
with one ``FunctionResponse`` per confirmation carrying ``ToolConfirmation(confirmed=...)``.

Cancelling ``invoke`` (CANCEL, STEER) sets the invocation's ``abort_signal``: ADK stops itself
(cancels and awaits its root task, so the model call in flight is cancelled) and seals the
calls left unanswered in the session with its INVOCATION_ABORTED responses, so the run's ADK
session stays consistent for the next task. If ADK has not stopped within half the run's
cancel grace period, its generator is cancelled outright.
"""

from __future__ import annotations

import asyncio
import itertools
import weakref
from contextlib import aclosing
from dataclasses import dataclass, field
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from goldfive.adapters.adk._hooks import GoldfivePlugin, ReportingTool, Turn, TurnRegistry
from goldfive.adapters.common import ask_tool_approval, task_input
from goldfive.adapters.task_prompt import Told
from goldfive.results import InvocationResult
from goldfive.run.current_run import current
from goldfive.run.tools import ReportingToolSpec, offered
from goldfive.types import Session, Task, TaskStatus

__all__ = ["ADKAdapter"]

#: The function call ADK pauses an invocation on until a tool call is confirmed.
CONFIRMATION_CALL = "adk_request_confirmation"
_REPORTS = ("report_task_completed", "report_task_failed")


@dataclass
class _RunSessions:
    """The ADK sessions of one goldfive run: ``free`` ones wait for its next task."""

    run: weakref.ref[Session]
    free: list[str] = field(default_factory=list)
    all: set[str] = field(default_factory=set)
    #: ADK session id -> what that session's conversation was told of the run.
    told: dict[str, Told] = field(default_factory=dict)

    def told_in(self, adk_session_id: str) -> Told:
        return self.told.setdefault(adk_session_id, Told())


class ADKAdapter:
    """An AgentAdapter running a Google ADK agent (an ``LlmAgent`` or any ``BaseAgent``).

    Only an ``LlmAgent`` root can be offered the reporting tools; another root agent runs as
    it is and its tasks end with its final answer. ``run_config`` is passed to every
    ``run_async``."""

    def __init__(
        self,
        agent: BaseAgent,
        *,
        name: str | None = None,
        app_name: str = "goldfive",
        user_id: str = "goldfive",
        run_config: RunConfig | None = None,
    ) -> None:
        if not isinstance(agent, BaseAgent):
            raise TypeError(f"ADKAdapter takes a google.adk agent (BaseAgent), got {type(agent).__name__}")
        self.agent = agent
        self.name = name or agent.name
        self.app_name = app_name
        self.user_id = user_id
        self.run_config = run_config
        self.session_service = InMemorySessionService()
        self._turns = TurnRegistry()
        self._runner: Runner | None = None
        self._runs: dict[int, _RunSessions] = {}
        self._numbers = itertools.count(1)

    @property
    def available_agents(self) -> list[str]:
        return [self.name]

    # -- the Runner and the sessions ------------------------------------------------
    def _runner_for(self, specs: dict[str, ReportingToolSpec]) -> Runner:
        if self._runner is None:
            root = self.agent
            if isinstance(root, LlmAgent):
                reporting = [ReportingTool(spec, self._turns) for spec in offered(specs).values()]
                root = root.clone(update={"tools": [*root.tools, *reporting]})
            app = App(name=self.app_name, root_agent=root, plugins=[GoldfivePlugin(self._turns)])
            self._runner = Runner(app=app, session_service=self.session_service)
        return self._runner

    async def _acquire(self, session: Session) -> str:
        await self._forget_ended_runs()
        key = id(session)
        sessions = self._runs.get(key)
        if sessions is None or sessions.run() is not session:
            sessions = self._runs[key] = _RunSessions(weakref.ref(session))
        if sessions.free:
            return sessions.free.pop()
        created = await self.session_service.create_session(
            app_name=self.app_name, user_id=self.user_id, session_id=f"{session.run_id}-adk{next(self._numbers)}"
        )
        sessions.all.add(created.id)
        return created.id

    def _release(self, session: Session, adk_session_id: str) -> None:
        sessions = self._runs.get(id(session))
        if sessions is not None and sessions.run() is session:
            sessions.free.append(adk_session_id)

    async def _forget_ended_runs(self) -> None:
        """Delete the ADK sessions of runs that have ended (their Session is gone)."""
        dead = [key for key, s in self._runs.items() if s.run() is None]
        for sid in [sid for key in dead for sid in self._runs.pop(key).all]:
            await self.session_service.delete_session(app_name=self.app_name, user_id=self.user_id, session_id=sid)

    async def aclose(self) -> None:
        """Close the Runner (its plugins and toolsets) and drop every ADK session."""
        for sessions in self._runs.values():
            for sid in sessions.all:
                await self.session_service.delete_session(app_name=self.app_name, user_id=self.user_id, session_id=sid)
        self._runs.clear()
        if self._runner is not None:
            await self._runner.close()
            self._runner = None

    # -- one task ---------------------------------------------------------------------
    async def invoke(self, task: Task, session: Session) -> InvocationResult:
        ctx = current()
        specs = ctx.tools_for(task.id)
        runner = self._runner_for(specs)
        adk_session_id = await self._acquire(session)
        turn = Turn(ctx, session, task.id, specs)
        self._turns[adk_session_id] = turn
        try:
            return await self._drive(runner, adk_session_id, turn, task, session)
        finally:
            self._turns.pop(adk_session_id, None)
            self._release(session, adk_session_id)

    async def _drive(self, runner: Runner, adk_session_id: str, turn: Turn, task: Task, session: Session) -> InvocationResult:
        # The message is in the ADK session once the invocation starts (an abort seals the
        # session, it does not drop the message).
        sessions = self._runs.get(id(session))
        told = sessions.told_in(adk_session_id) if sessions is not None and sessions.run() is session else None
        message = types.Content(role="user", parts=[types.Part(text=task_input(session, task, told))])
        final_text, reported = "", ""
        drain_s = turn.ctx.config.cancel_grace_s / 2
        while True:
            confirmations: list[types.FunctionCall] = []
            abort = asyncio.Event()
            adk_run = runner.run_async(
                user_id=self.user_id, session_id=adk_session_id, new_message=message,
                run_config=self.run_config, abort_signal=abort,
            )
            try:
                async with aclosing(_abortable(adk_run, abort, drain_s)) as events:
                    async for event in events:
                        calls = event.get_function_calls()
                        confirmations += [c for c in calls if c.name == CONFIRMATION_CALL]
                        reported = _reported(calls) or reported
                        final_text = _final_text(event) or final_text
                        if event.get_function_responses():
                            status = _status(session, task)
                            if status.is_terminal:
                                return _ended(task, status, reported or final_text)
            except Exception as exc:  # the invocation boundary: ADK, the model or a tool failed
                return InvocationResult(task.id, text=final_text, stop_reason="error", error=f"ADK run failed: {type(exc).__name__}: {exc}")
            if not confirmations:
                return InvocationResult(task.id, text=final_text, stop_reason="stop")
            answers = await asyncio.gather(*(self._confirm(turn, call) for call in confirmations))
            message = types.Content(role="user", parts=list(answers))

    async def _confirm(self, turn: Turn, call: types.FunctionCall) -> types.Part:
        """Ask the person about one ``adk_request_confirmation`` call; the answer as ADK wants it."""
        args = call.args or {}
        original = args.get("originalFunctionCall") or {}
        hint = str((args.get("toolConfirmation") or {}).get("hint") or "")
        tool_name = str(original.get("name") or "?")
        call_id = str(original.get("id") or call.id or "")
        decision = await ask_tool_approval(
            turn.ctx,
            task_id=turn.task_id,
            tool_name=tool_name,
            args=dict(original.get("args") or {}),
            call_id=call_id,
            prompt=f"Run {tool_name}?" + (f" ({hint})" if hint and not hint.startswith("Please approve or reject") else ""),
        )
        turn.decisions[call_id] = decision
        payload: dict[str, Any] = {"outcome": decision.outcome, "reason": decision.reason}
        if decision.arguments is not None:
            payload["arguments"] = decision.arguments
        response = {"confirmed": decision.approved, "payload": {"goldfive": payload}}
        return types.Part(function_response=types.FunctionResponse(id=call.id, name=CONFIRMATION_CALL, response=response))


async def _abortable(adk_run: AsyncGenerator[Event, None], abort: asyncio.Event, drain_s: float) -> AsyncGenerator[Event, None]:
    """The events of ``adk_run``; when the caller is cancelled, ADK's own abort instead.

    Each step runs shielded, so a cancellation (CANCEL, STEER) does not land inside ADK's
    generator: the invocation's ``abort_signal`` is set and ADK stops itself (cancels its root
    task, seals the calls left unanswered in the session) within ``drain_s``; then the
    cancellation goes on. ``aclose`` (the task ended early) closes ADK's generator, which ADK
    treats as a clean completion."""
    step: asyncio.Future[Event] | None = None
    try:
        while True:
            step = asyncio.ensure_future(anext(adk_run))
            try:
                event = await asyncio.shield(step)
            except StopAsyncIteration:
                return
            step = None
            yield event
    except asyncio.CancelledError:
        abort.set()
        await _drain(adk_run, step, drain_s)
        raise
    finally:
        await adk_run.aclose()


async def _drain(adk_run: AsyncGenerator[Event, None], step: asyncio.Future[Event] | None, budget_s: float) -> None:
    """Let an aborted ADK run finish within ``budget_s``; past it, cancel it outright."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget_s
    while True:
        step = step or asyncio.ensure_future(anext(adk_run))
        done, _ = await asyncio.wait({step}, timeout=max(0.0, deadline - loop.time()))
        if not done:
            step.cancel()
            await asyncio.wait({step})
        if step.cancelled() or step.exception() is not None:
            return
        step = None


def _final_text(event: Event) -> str:
    if event.author == "user" or event.partial or event.content is None or event.get_function_calls():
        return ""
    return "".join(p.text for p in event.content.parts or [] if p.text and not p.thought)


def _reported(calls: list[types.FunctionCall]) -> str:
    for call in calls:
        if call.name in _REPORTS and call.args:
            return str(call.args.get("result") or call.args.get("reason") or "")
    return ""


def _status(session: Session, task: Task) -> TaskStatus:
    plan = session.plan
    if plan is not None and plan.has_task(task.id):
        return plan.task(task.id).status
    return task.status


def _ended(task: Task, status: TaskStatus, text: str) -> InvocationResult:
    if status == TaskStatus.COMPLETED:
        return InvocationResult(task.id, text=text, stop_reason="task_completed")
    return InvocationResult(task.id, stop_reason=f"task_{status.lower()}", error=text or f"task {status.lower()}")
