"""PydanticAIAdapter: a PydanticAI ``Agent`` as it is, one goldfive task = one agent run.

The run's input is :func:`goldfive.adapters.common.task_input` (goals, plan, completed results,
the task); its final output, as text, is the task's result. The conversation is PydanticAI's own
message history, kept per goldfive run: each task's run continues it (``message_history=``,
``conversation_id=`` the goldfive run id), so the agent remembers what it did in earlier tasks;
a finished task's input is kept as its last line only (the next input carries the plan anew).

Per run, and never on the user's agent: the eight reporting tools (a ``FunctionToolset``) and the
:class:`~goldfive.adapters.pydantic_ai.steering.GoldfiveSteering` capability (tool approval). The
adapter drives ``agent.iter`` node by node: before each model request it drains the injected
messages into ``AgentRun.enqueue`` (they go into that request and stay in the history), and it
records each model answer and tool result. When a reporting tool ends the task (completed /
failed), the run stops before its next model call, as the reference adapter does.

Cancelling ``invoke`` (CANCEL, STEER) cancels the task driving ``agent.iter``: PydanticAI tears
down the model request in flight and its tool tasks, pending approvals are withdrawn, and the
``CancelledError`` propagates; the history keeps only completed runs.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.exceptions import AgentRunError, UsageLimitExceeded, UserError
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.tools import DeferredToolRequests
from pydantic_ai.usage import UsageLimits

from goldfive.adapters.common import task_input, to_text
from goldfive.adapters.pydantic_ai.steering import CURRENT, GoldfiveSteering, ReportingToolset
from goldfive.results import InvocationResult
from goldfive.run.context import context_of, read_injected
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, Task, TaskStatus

__all__ = ["PydanticAIAdapter"]


class PydanticAIAdapter:
    """An AgentAdapter for a PydanticAI agent.

    ``deps`` are passed to every run (the agent's ``deps_type``); ``usage_limits`` bound each
    run (PydanticAI's default otherwise); ``memory=False`` starts every task from an empty
    history instead of continuing the run's conversation.
    """

    #: The agent's tools are its own; goldfive adds only the reporting tools.
    user_tools: list[Any] = []

    def __init__(
        self,
        agent: AbstractAgent[Any, Any],
        *,
        name: str | None = None,
        deps: Any = None,
        usage_limits: UsageLimits | None = None,
        memory: bool = True,
    ) -> None:
        if not isinstance(agent, AbstractAgent):
            raise TypeError(f"PydanticAIAdapter needs a pydantic_ai Agent, got {type(agent).__name__}")
        self.agent = agent
        self.name = name or agent.name or "pydantic_ai_agent"
        self.deps = deps
        self.usage_limits = usage_limits
        self.memory = memory
        # id(session) -> (the session, its conversation); a dead reference is a finished run.
        self._histories: dict[int, tuple[weakref.ref[Session], list[ModelMessage]]] = {}
        self._reporting = ReportingToolset()

    @property
    def available_agents(self) -> list[str]:
        return [self.name]

    def history(self, session: Session) -> list[ModelMessage]:
        """The PydanticAI conversation of ``session``'s run so far (empty when none)."""
        entry = self._histories.get(id(session))
        if entry is None or entry[0]() is not session:
            return []
        return entry[1]

    async def invoke(self, task: Task, session: Session) -> InvocationResult:
        ctx = context_of(session)
        specs = ctx.tools_for(task.id)
        steering = GoldfiveSteering(ctx, task.id, specs)
        toolset = self._reporting.for_specs(specs)
        history = list(self.history(session)) if self.memory else []
        prompt = task_input(session, task)
        new: list[ModelMessage] = []
        output: Any = None
        bound = CURRENT.set(steering)
        try:
            async with self.agent.iter(
                prompt,
                message_history=history,
                conversation_id=session.run_id if not history else None,
                deps=self.deps,
                usage_limits=self.usage_limits,
                toolsets=[toolset],
                capabilities=[steering],
            ) as run:
                async for node in run:
                    if Agent.is_call_tools_node(node):
                        await steering.turn(node.model_response)
                    elif Agent.is_model_request_node(node):
                        await steering.results(node.request)
                        if _status(session, task).is_terminal:
                            # A reporting tool ended the task: no further model call. The tool
                            # returns waiting in this node close the calls in the history.
                            new = [*run.new_messages(), node.request]
                            break
                        # INJECT_MESSAGE: into the request this node is about to send.
                        texts = await read_injected(session, task.id)
                        if texts:
                            run.enqueue(*texts)
                else:
                    new = run.new_messages()
                    output = run.result.output if run.result is not None else None
        except UsageLimitExceeded as exc:
            await _drift(ctx.steerer, session, DriftKind.TOO_MANY_STEPS, str(exc), task.id)
            return InvocationResult(task.id, stop_reason="max_steps", error=f"step limit exceeded: {exc}")
        except (AgentRunError, UserError) as exc:
            # The framework refused or the model failed: the task fails with PydanticAI's words.
            return InvocationResult(task.id, stop_reason="model_error", error=f"{type(exc).__name__}: {exc}")
        finally:
            CURRENT.reset(bound)
        if self.memory:
            self._remember(session, _compacted(new, prompt, f"Do the current task ({task.id}): {task.title}"))
        status = _status(session, task)
        if status.is_terminal:
            if status == TaskStatus.COMPLETED:
                return InvocationResult(task.id, text=steering.reported or to_text(output), stop_reason="task_completed")
            return InvocationResult(task.id, stop_reason=f"task_{status.lower()}", error=steering.reported or f"task {status.lower()}")
        if isinstance(output, DeferredToolRequests):
            names = ", ".join(c.tool_name for c in output.calls) or "none"
            return InvocationResult(
                task.id, stop_reason="deferred", error=f"the agent deferred calls goldfive cannot run (external tools: {names})"
            )
        return InvocationResult(task.id, text=to_text(output), stop_reason="stop")

    def _remember(self, session: Session, new: list[ModelMessage]) -> None:
        # Appended, not replaced: tasks of one run may run in parallel, each adds its own turn.
        for key in [k for k, (ref, _) in self._histories.items() if ref() is None]:
            del self._histories[key]
        entry = self._histories.get(id(session))
        if entry is None or entry[0]() is not session:
            entry = (weakref.ref(session), [])
            self._histories[id(session)] = entry
        entry[1].extend(new)


def _compacted(messages: list[ModelMessage], prompt: str, short: str) -> list[ModelMessage]:
    """``messages`` with the task input cut to its last line: the goals, plan and results it
    carried are stale once the task is done, and every later task's input repeats them fresh.
    Without this a 100-task run would carry 100 copies of the plan into every model call."""
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) and p.content == prompt for p in message.parts):
            parts = [replace(p, content=short) if isinstance(p, UserPromptPart) and p.content == prompt else p for p in message.parts]
            message = replace(message, parts=parts)
        out.append(message)
    return out


def _status(session: Session, task: Task) -> TaskStatus:
    plan = session.plan
    if plan is not None and plan.has_task(task.id):
        return plan.task(task.id).status
    return task.status


async def _drift(steerer: Any, session: Session, kind: DriftKind, detail: str, task_id: str) -> None:
    await steerer.report_drift(session, DriftEvent(kind, DriftSeverity.WARNING, detail, task_id))
