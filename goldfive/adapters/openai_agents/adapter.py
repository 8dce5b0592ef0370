"""OpenAIAgentsAdapter: runs a goldfive task as one ``Runner.run`` of an OpenAI Agents SDK agent.

The SDK run's input is ``task_input``: the goals, the plan, completed results and the task for the
first task of an SDK session, what changed since for a later one (the session keeps every input,
so the model reads the run's context once, then the updates). Without a session each task's run
is a conversation of its own and gets a brief bounded in size (``brief_prompt``: the goals, a
short plan, the results it depends on, the task) rather than the whole plan. The run's final
output is the task's result. The agent runs as a clone carrying one reporting tool,
``goldfive_report`` (progress, failed, blocked, new work, divergence, approval, question); a
reporting tool called by its own name still runs (see ``bridge``). The user's object is never
changed. A tool the SDK says needs approval interrupts the run (``result.interruptions``);
each call is asked of the person under its own call id, then ``RunState.approve`` / ``reject`` (with
the person's reason as the text the model reads) and the run resumes from its state. Messages
injected while the task runs reach the model before its next call (``call_model_input_filter``).
Cancelling ``invoke`` cancels ``Runner.run`` where it is (a model call, a tool, an approval wait):
the SDK's own cleanup runs and the cancellation propagates.

Memory: the SDK ``Session`` (in-memory SQLite by default) is kept per goldfive run, so a task's
run sees the conversation of the tasks before it. Concurrent tasks (the parallel executor) each
take a session of the run that no other running task holds, so two conversations never interleave.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agents import Agent, AgentsException, MaxTurnsExceeded, ModelBehaviorError, RunConfig, Runner, RunResult, SQLiteSession
from agents import Session as AgentSession
from agents.items import ToolApprovalItem
from agents.run_config import DEFAULT_MAX_TURNS
from agents.run_state import RunState

from goldfive.adapters.common import ToolDecision, ask_tool_approval, task_input, task_line, to_text
from goldfive.adapters.openai_agents import bridge
from goldfive.adapters.openai_agents.turn import FRAMEWORK, RecordingHooks, Turn, call_args, call_id_of
from goldfive.adapters.task_prompt import Told, brief_prompt
from goldfive.run.report_tool import REPORTING_TEXT
from goldfive.results import InvocationResult
from goldfive.run.context import RunContext
from goldfive.run.current_run import current
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, Task, TaskStatus

__all__ = ["FRAMEWORK", "OpenAIAgentsAdapter", "SessionFactory"]

#: Builds the SDK session of a goldfive run from its run id (and a lane number for concurrent tasks).
SessionFactory = Callable[[str], AgentSession]
_MEMORY = "goldfive.openai_agents.sessions"


def in_memory_session(key: str) -> AgentSession:
    """The default memory: an in-memory SQLite session, gone when the run is."""
    return SQLiteSession(session_id=key)


class OpenAIAgentsAdapter:
    """An AgentAdapter for an ``agents.Agent``.

    ``run_config``: the SDK RunConfig for every run (default: tracing disabled, so nothing leaves
    the machine; pass your own to trace). ``context``: the SDK run context object. ``max_turns``:
    model calls per task. ``session_factory``: the SDK memory per goldfive run, ``None`` for a
    fresh conversation per task.
    """

    def __init__(
        self,
        agent: Agent[Any],
        *,
        run_config: RunConfig | None = None,
        context: Any = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        session_factory: SessionFactory | None = in_memory_session,
        name: str = "",
    ) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"OpenAIAgentsAdapter takes an agents.Agent, got {type(agent).__name__}")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        self.agent = agent
        self.run_config = run_config if run_config is not None else RunConfig(tracing_disabled=True)
        self.context = context
        self.max_turns = max_turns
        self.session_factory = session_factory
        self.name = name or agent.name
        self._hooks = RecordingHooks()
        # Built once and shared by every task (cloning an Agent costs more than a model call
        # of the SDK's test model); rebuilt when the user's agent or run_config changed.
        self._clone: tuple[tuple[int, ...], Agent[Any]] | None = None
        self._config: tuple[int, RunConfig] | None = None

    @property
    def available_agents(self) -> list[str]:
        return [self.name]

    async def invoke(self, task: Task, session: Session) -> InvocationResult:
        ctx = current()
        turn = Turn(ctx, session, task)
        agent = self._agent(ctx, task)
        options: dict[str, Any] = {"hooks": self._hooks, "run_config": self._run_config()}
        memory = self._take_memory(session)
        if memory is not None:
            options["session"] = memory
        told = self._told(session, memory) if memory is not None else None
        if told is None:
            turn.input_text = f"{brief_prompt(session, task, REPORTING_TEXT)}\n\n{task_line(task)}"
        else:
            # In a session, the input counts as told once a run with it has ended (below): a
            # run that raised may not have saved it.
            turn.input_text = task_input(session, task, told, keep=False)
        token = turn.enter()
        result: RunResult | None = None
        try:
            result = await Runner.run(agent, turn.input_text, context=self.context, max_turns=self.max_turns, **options)
            if told is not None:
                told.kept(task.id)
            while result.interruptions:
                state = result.to_state()
                await self._decide(turn, agent, state, list(result.interruptions))
                result = await Runner.run(agent, state, **options)
            if turn.unknown_tool:  # the run ended without another model call to raise it in
                raise ModelBehaviorError(f"Tool {turn.unknown_tool} not found in agent {agent.name}")
        except bridge.TaskEnded:
            pass  # a reporting tool called by its own name ended the task (its status says how)
        except MaxTurnsExceeded as exc:
            detail = f"no final answer after {self.max_turns} model calls"
            await ctx.steerer.report_drift(session, DriftEvent(DriftKind.TOO_MANY_STEPS, DriftSeverity.WARNING, detail, task.id))
            return InvocationResult(task.id, stop_reason="max_turns", error=f"step limit exceeded: {detail} ({exc})")
        except AgentsException as exc:
            return InvocationResult(task.id, stop_reason="framework_error", error=f"{type(exc).__name__}: {exc}")
        finally:
            turn.leave(token)
            if memory is not None:
                self._give_back(session, memory)
        return _outcome(turn, result)

    def _agent(self, ctx: RunContext, task: Task) -> Agent[Any]:
        """The clone of the user's agent with the reporting tools, rebuilt only when the user's
        agent changed (its attributes or its tools) or the run offers other tools."""
        user = self.agent
        key = (id(ctx), *map(id, vars(user).values()), *map(id, user.tools))  # map: no Python call per item
        if self._clone is None or self._clone[0] != key:
            self._clone = (key, bridge.clone_agent(user, ctx.tools_for(task.id)))
        return self._clone[1]

    def _run_config(self) -> RunConfig:
        if self._config is None or self._config[0] != id(self.run_config):
            self._config = (id(self.run_config), bridge.run_config(self.run_config))
        return self._config[1]

    # -- approvals -------------------------------------------------------------------------
    async def _decide(self, turn: Turn, agent: Agent[Any], state: RunState[Any], items: list[ToolApprovalItem]) -> None:
        """Ask the person about every interrupted call (each under its own id, all at once),
        then put each decision into the state the run resumes from."""
        decisions = await asyncio.gather(*(self._ask(turn, item) for item in items))
        for item, (call_id, args, decision) in zip(items, decisions):
            name = item.tool_name or "tool"
            if not decision.approved:
                message = decision.denial_for_model(name)
            elif decision.arguments is None or decision.arguments == args:
                state.approve(item)
                continue
            elif item.agent is agent and any(t.name == name and bridge.always_asks(t) for t in agent.tools if hasattr(t, "name")):
                turn.edited[call_id] = decision.arguments
                state.approve(item)
                continue
            else:
                message = (
                    f"A person approved {name} only with changed arguments {to_text(decision.arguments)}, which this "
                    "tool cannot be run with here; it did not run. Call it again with those arguments if they fit."
                )
            state.reject(item, rejection_message=message)
            await turn.record_rejected(name, call_id, args, message)

    async def _ask(self, turn: Turn, item: ToolApprovalItem) -> tuple[str, dict[str, Any], ToolDecision]:
        call_id = call_id_of(item.raw_item)
        args = call_args(item.raw_item)
        target = call_id
        if not target or target in turn.session.pending_approvals:
            # Another task's model used the same id (scripted models do): keep both askable.
            target = f"{call_id or 'call'}@{turn.task.id}"
        decision = await ask_tool_approval(turn.ctx, task_id=turn.task.id, tool_name=item.tool_name or "tool", args=args, call_id=target)
        return call_id, args, decision

    # -- memory ----------------------------------------------------------------------------
    def _take_memory(self, session: Session) -> AgentSession | None:
        if self.session_factory is None:
            return None
        free: list[AgentSession] = session.state.setdefault(_MEMORY, [])
        if free:
            return free.pop()
        count = session.state.get(_MEMORY + ".count", 0)
        session.state[_MEMORY + ".count"] = count + 1
        return self.session_factory(session.run_id if count == 0 else f"{session.run_id}.{count}")

    @staticmethod
    def _told(session: Session, memory: AgentSession) -> Told:
        """What the SDK session ``memory`` (one of the run's) was told of the run."""
        told: dict[int, Told] = session.state.setdefault(_MEMORY + ".told", {})
        if id(memory) not in told:
            told[id(memory)] = Told(REPORTING_TEXT)
        return told[id(memory)]

    def _give_back(self, session: Session, memory: AgentSession) -> None:
        session.state.setdefault(_MEMORY, []).append(memory)


def _outcome(turn: Turn, result: RunResult | None) -> InvocationResult:
    """The task's end: the status a tool reported, else the run's final output as the result
    (``result`` is None when a reporting tool called by its own name ended the run)."""
    task_id = turn.task.id
    status = turn.status()
    output = to_text(result.final_output) if result is not None else ""
    if status == TaskStatus.COMPLETED:
        return InvocationResult(task_id, text=turn.reported or output, stop_reason="task_completed")
    if status.is_terminal:
        return InvocationResult(task_id, stop_reason=f"task_{status.lower()}", error=turn.reported or f"task {status.lower()}")
    return InvocationResult(task_id, text=output, stop_reason="final_output")
