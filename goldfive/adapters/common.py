"""What every framework adapter shares: the task's input, approvals, and the steps it records.

A framework adapter turns one goldfive task into one run of the framework's agent. This module
holds the parts that do not depend on the framework, so the four adapters say the same things
to the model and to the person:

- :func:`task_input` is the text the framework run gets (goals, the plan, completed tasks'
  results, then the task itself; for a later task of a conversation that already has them,
  what changed since, see :class:`~goldfive.adapters.task_prompt.Told`).
- :func:`ask_tool_approval` turns the framework's native "this call needs approval" into a
  goldfive approval (ApprovalRequested, the approvals pane, APPROVE / REJECT) and returns a
  :class:`ToolDecision` the adapter hands back to the framework in its native form.
- :func:`ask_question` does the same for a question the agent asks a person (a LangGraph
  ``interrupt("Deploy api?")``, Claude's ``AskUserQuestion``, LangChain's ``respond``,
  goldfive's ``ask_person`` tool): a ``question_asked`` with its options, answered with
  ANSWER (text or an option) and returned as an :class:`Answer`; a client that knows no
  questions may still APPROVE (yes, or its detail as the answer) or REJECT (no) it.
- :func:`record_model_turn` / :func:`record_tool_call` put what happened inside the turn on
  the event stream (``agent_step`` events).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from goldfive import events
from goldfive.adapters.task_prompt import DEFAULT_REPORTING, Told, system_prompt
from goldfive.budget.gate import before_tool_call
from goldfive.clean import json_encoder
from goldfive.run.approvals import request_approval
from goldfive.run.context import RunContext
from goldfive.run.tools import REPORTING_TOOL_NAMES, ReportingToolSpec
from goldfive.types import Session, Task

__all__ = [
    "Answer",
    "ToolDecision",
    "ask_question",
    "ask_tool_approval",
    "record_model_turn",
    "framework_span",
    "record_tool_call",
    "recording_tools",
    "task_input",
    "task_line",
    "to_text",
]


def task_input(
    session: Session, task: Task, told: Told | None = None, *, keep: bool = True, reporting: str = DEFAULT_REPORTING
) -> str:
    """The input of the framework run for ``task``: the run's context, then the task.

    ``told``: what the conversation this input goes into was given before (None: a fresh
    conversation). The first input of a conversation carries the whole context; a later one
    only what changed since (``Told.input``). With ``keep`` the input counts as in the
    conversation at once; an adapter that knows only later whether the conversation kept it
    passes ``keep=False`` and calls ``told.kept(task.id)`` then. ``reporting``: what a fresh
    conversation's input says about reporting (a ``Told`` has its own)."""
    context = system_prompt(session, task, reporting) if told is None else told.input(session, task)
    if told is not None and keep:
        told.kept(task.id)
    return f"{context}\n\n{task_line(task)}" if context else task_line(task)


def task_line(task: Task) -> str:
    """The last line of every task input: "Do the current task (ID): TITLE"."""
    return f"Do the current task ({task.id}): {task.title}"


def to_text(value: Any) -> str:
    """A tool result or model output as text for the event log and the task result."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return _to_json(value)
    except (TypeError, ValueError):
        return str(value)


#: ``json.dumps(value, ensure_ascii=False, default=str)`` with its encoder made once (every
#: tool call's result goes through here).
_to_json = json_encoder(ensure_ascii=False, default=str)


@dataclass(frozen=True)
class ToolDecision:
    """What the person decided about one tool call."""

    #: "approve", "reject", "timeout" or "unavailable" (nobody can answer: no control channel).
    outcome: str
    #: The person's reason (reject) or the detail of a timeout / unavailability.
    reason: str = ""
    #: Arguments the person edited before approving, when they did (else None).
    arguments: dict[str, Any] | None = None

    @property
    def approved(self) -> bool:
        return self.outcome == "approve"

    def denial_for_model(self, tool_name: str) -> str:
        """The text the model sees instead of the tool's result when the call did not run."""
        if self.outcome == "reject":
            why = f": {self.reason}" if self.reason else ""
            return f"The user rejected the call to {tool_name}{why}. It did not run; do not retry it unchanged."
        if self.outcome == "timeout":
            return f"The call to {tool_name} was not approved in time ({self.reason}); it did not run."
        return f"The call to {tool_name} could not be approved ({self.reason}); it did not run."


async def ask_tool_approval(
    ctx: RunContext,
    *,
    task_id: str,
    tool_name: str,
    args: dict[str, Any],
    call_id: str = "",
    prompt: str = "",
    parameters: dict[str, Any] | None = None,
    editable: bool = True,
) -> ToolDecision:
    """Ask the person about one tool call and wait for the decision.

    ``call_id`` is the framework's id of the call; a fresh one is made when the framework has
    none (parallel calls each get their own). ``parameters`` (the tool's JSON schema, when the
    framework gives one) is what arguments a person edits are checked against;
    ``editable=False`` when the framework takes no changed arguments for this call (an APPROVE
    with edited arguments is then refused). Cancelling the caller withdraws the request."""
    target = call_id or f"call-{uuid.uuid4().hex[:12]}"
    decision = await request_approval(
        ctx,
        target_id=target,
        kind="tool",
        prompt=prompt or f"Run {tool_name}?",
        task_id=task_id,
        tool_name=tool_name,
        args=args,
        parameters=parameters,
        editable=editable,
    )
    return _decision(decision)


@dataclass(frozen=True)
class Answer:
    """How a person answered a question (docs/approvals.md#questions)."""

    #: "answer" (ANSWER: ``text``, and ``option`` when one was picked), "approve" / "reject"
    #: (a client that knows no questions said yes / no; ``text`` holds its detail), "timeout"
    #: or "unavailable" (nobody can answer: no control channel).
    outcome: str
    text: str = ""
    option: str = ""

    @property
    def answered(self) -> bool:
        """The person said something the agent can go on with (an answer, or yes)."""
        return self.outcome in ("answer", "approve")

    def for_model(self) -> str:
        """The answer as the agent reads it."""
        if self.outcome == "answer":
            return self.text
        if self.outcome == "approve":
            return self.text or "yes"
        if self.outcome == "reject":
            return f"no: {self.text}" if self.text else "no"
        if self.outcome == "timeout":
            return f"(no answer: {self.text})" if self.text else "(no answer in time)"
        return f"(nobody can answer: {self.text})" if self.text else "(nobody can answer)"


async def ask_question(
    ctx: RunContext, *, task_id: str, question: str, target_id: str = "", options: Sequence[str] = (), free_text: bool = True
) -> Answer:
    """Ask the person a question the agent asked and wait for the answer: typed (when
    ``free_text``) or one of ``options``.

    No rule answers a question and it has no arguments to edit. Cancelling the caller
    withdraws it."""
    target = target_id or f"question-{uuid.uuid4().hex[:12]}"
    offered = tuple(dict.fromkeys(str(o) for o in options if str(o)))
    decision = await request_approval(
        ctx, target_id=target, kind="question", prompt=question, task_id=task_id, options=offered, free_text=free_text or not offered
    )
    return Answer(str(decision.get("decision", "reject")), str(decision.get("detail", "")), str(decision.get("option", "")))


def _decision(decision: dict[str, Any]) -> ToolDecision:
    edited = decision.get("arguments")
    return ToolDecision(
        outcome=str(decision.get("decision", "reject")),
        reason=str(decision.get("detail", "")),
        arguments=edited if isinstance(edited, dict) else None,
    )


async def record_model_turn(ctx: RunContext, *, task_id: str, framework: str, text: str = "", tool_calls: list[str] | None = None) -> None:
    """One model answer: its text and the names of the tools it called."""
    calls = f" [calls: {', '.join(tool_calls)}]" if tool_calls else ""
    await ctx.emit(events.agent_step, task_id=task_id, step="model_turn", framework=framework, text=f"{text}{calls}".strip())


async def record_tool_call(
    ctx: RunContext,
    *,
    task_id: str,
    framework: str,
    tool_name: str,
    args: dict[str, Any] | None,
    result: Any = None,
    outcome: str = "ok",
    call_id: str = "",
    duration_ms: int = 0,
) -> None:
    """One tool call: its arguments and its result (or why it did not run), and how long it
    ran when the adapter measured it."""
    await ctx.emit(
        events.agent_step,
        duration_ms=duration_ms,
        task_id=task_id,
        step="tool_call",
        framework=framework,
        tool_name=tool_name,
        call_id=call_id,
        args=args or {},
        text=to_text(result),
        outcome=outcome,
    )


#: The ``framework`` of the steps goldfive's own adapters record (CallableAdapter, LLMAgentAdapter).
GOLDFIVE_FRAMEWORK = "goldfive"


def recording_tools(ctx: RunContext, task_id: str, tools: dict[str, ReportingToolSpec], *, all_tools: bool = False) -> dict[str, ReportingToolSpec]:
    """``tools`` with each call put on the event stream as an ``agent_step`` tool_call (so the
    event log and the watchdog see what the agent called, with its arguments). The reporting
    tools have events of their own and are recorded only with ``all_tools``."""
    out: dict[str, ReportingToolSpec] = {}
    for name, spec in tools.items():
        if not all_tools and name in REPORTING_TOOL_NAMES:
            out[name] = spec
            continue

        async def call(_spec: ReportingToolSpec = spec, **kwargs: Any) -> dict[str, Any]:
            if _spec.name not in REPORTING_TOOL_NAMES:  # the agent's own tools spend; reporting does not
                guard = ctx.budget
                if guard.reached is not None or not guard.budget.empty:  # (no budget, not paused: nothing to wait for)
                    await before_tool_call(task_id)
            started = time.monotonic()
            # The arguments were checked by this wrapper's own spec (the same schema).
            result = await _spec.checked_call(**kwargs)
            failed = isinstance(result, dict) and result.get("ok") is False
            await record_tool_call(
                ctx, task_id=task_id, framework=GOLDFIVE_FRAMEWORK, tool_name=_spec.name, args=kwargs,
                result=result, outcome="error" if failed else "ok", duration_ms=int((time.monotonic() - started) * 1000),
            )  # fmt: skip
            return result

        out[name] = replace(spec, handler=call)
    return out


def framework_span() -> tuple[str, str]:
    """The (trace id, span id) in hex of the OpenTelemetry span current now, when a framework's
    own instrumentation has one recording (ADK's ``call_llm`` span around its model callbacks;
    an instrumented PydanticAI agent's run): the usage reported with them lets an OTel export
    link to that span instead of making a second chat span. ("", "") otherwise, and always when
    opentelemetry is not installed."""
    try:
        from opentelemetry import trace
    except ImportError:
        return "", ""
    span = trace.get_current_span()
    ctx = span.get_span_context()
    if not span.is_recording() or not ctx.is_valid:
        return "", ""
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"
