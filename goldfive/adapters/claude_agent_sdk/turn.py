"""One goldfive task on the run's Claude conversation: one query, what it records, how it ends.

The conversation (conversation.py) sends the task's prompt and feeds every message it reads to
:meth:`Turn.on_message` until that says the query is over. Claude Code's callbacks reach the
turn the conversation is on:

- ``can_use_tool`` -> :meth:`Turn.permission`: each permission Claude Code asks for is a goldfive
  tool approval under the ``tool_use`` id with the tool input as its arguments (rules and the
  never-auto list first, the ledger records it): APPROVE is ``PermissionResultAllow`` (with
  ``updated_input`` when a person edited the arguments), REJECT ``PermissionResultDeny`` whose
  message, with the person's reason, the model reads. ``AskUserQuestion`` is a question per
  question it holds (docs/approvals.md#questions: its options' labels offered, a typed answer
  taken), answered with ANSWER (or yes / no from a client that knows no questions) through
  ``updated_input["answers"]``;
- the hooks -> :meth:`Turn.hook`: PreToolUse, SubagentStart/Stop and Notification are ``hook``
  steps, PostToolUse / PostToolUseFailure ``tool_call`` steps;
- at each of those points (Claude Code waits for the answer before its next model call) the
  messages injected into the task are written into the running query (streaming input).
- the run's budget (docs/cost.md#budgets): over it, the PreToolUse hook holds the tool call
  (and so Claude's next model call, which waits for its result) until a person raises the
  budget and the run goes on. Claude Code answers a hook that takes longer than its matcher's
  timeout with "no decision" and runs the tool, so goldfive's PreToolUse matcher has a timeout
  of :data:`PRE_TOOL_TIMEOUT_S` and the hold ends :data:`BUDGET_HOLD_MARGIN_S` before it: the
  call is then denied, with a message saying the budget is reached, and never runs unasked.

The query is over at a ``ResultMessage`` that took in every message sent for the task (its
``user_message_uuids``): a message injected too late for the turn it was sent into makes Claude
Code run one more turn, which still belongs to this task.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    TextBlock,
    ToolPermissionContext,
    ToolUseBlock,
)

from goldfive import events
from goldfive.adapters.claude_agent_sdk.tools import allowed_names
from goldfive.adapters.claude_agent_sdk.usage import QueryUsage
from goldfive.budget.gate import before_tool_call
from goldfive.budget.guard import BudgetExhausted
from goldfive.adapters.common import ask_question, ask_tool_approval, record_model_turn, record_tool_call, to_text
from goldfive.results import InvocationResult
from goldfive.run.context import RunContext
from goldfive.usage import ModelUsage, report_usage
from goldfive.run.current_run import read_injected
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, Task, TaskStatus

__all__ = ["BUDGET_HOLD_MARGIN_S", "FRAMEWORK", "PRE_TOOL_TIMEOUT_S", "QUESTION_TOOL", "Turn", "user_message"]

FRAMEWORK = "claude_agent_sdk"
QUESTION_TOOL = "AskUserQuestion"
#: What Claude Code lists of a result's ``user_message_uuids`` at most.
_UUIDS_LISTED = 64
#: goldfive's reporting tools as Claude names them: never held by the budget.
REPORTING_TOOLS = frozenset(allowed_names())
#: The timeout of goldfive's PreToolUse hook matcher (Claude Code's default is 60 s): how long
#: a tool call may be held for the budget, at most.
PRE_TOOL_TIMEOUT_S = 3600.0
#: The hold ends this long before that timeout, with a denial (a hook that times out would let
#: the tool run).
BUDGET_HOLD_MARGIN_S = 60.0

Send = Callable[[list[dict[str, Any]]], Awaitable[None]]
PermissionResult = PermissionResultAllow | PermissionResultDeny


def user_message(text: str) -> dict[str, Any]:
    """A streamed user message with a uuid of its own (results list the uuids they took in)."""
    return {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None, "uuid": str(uuid.uuid4())}


#: The ``source`` of the usage this adapter records (Claude Code's result message).
USAGE_SOURCE = "claude_agent_sdk"


class Turn:
    def __init__(self, ctx: RunContext, session: Session, task: Task, send: Send, usage_of: Callable[[str, ResultMessage], QueryUsage]) -> None:
        self.ctx, self.session, self.task = ctx, session, task
        self._send = send
        self._usage_of = usage_of
        #: uuids of the user messages sent for this task, not yet seen taken in by a result.
        self.unanswered: set[str] = set()
        #: What report_task_completed / report_task_failed said.
        self.reported = ""
        #: tool_use id -> the arguments a person approved instead of the model's.
        self.ran_with: dict[str, dict[str, Any]] = {}
        self.result: ResultMessage | None = None
        #: Subagents seen starting (SubagentStart) and not yet seen stopping, by agent id.
        self.open_subagents: set[str] = set()
        self._subagents_stopped = asyncio.Event()
        self._subagents_stopped.set()

    # -- what goes in ---------------------------------------------------------------
    async def send(self, texts: list[str]) -> None:
        messages = [user_message(t) for t in texts]
        self.unanswered.update(m["uuid"] for m in messages)
        await self._send(messages)

    async def deliver_injected(self) -> None:
        """Write the messages injected into this task into the running query."""
        texts = await read_injected(self.session, self.task.id)
        if texts:
            await self.send(texts)

    # -- what comes out -------------------------------------------------------------
    async def on_message(self, message: Any) -> bool:
        """Record ``message``; True once the task's query is over."""
        if isinstance(message, AssistantMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            calls = [b.name for b in message.content if isinstance(b, ToolUseBlock)]
            await record_model_turn(self.ctx, task_id=self.task.id, framework=FRAMEWORK, text=text, tool_calls=calls)
            await self.deliver_injected()
            return False
        if not isinstance(message, ResultMessage):
            return False
        await self.finish_query(message)
        taken = message.user_message_uuids
        if taken is not None and len(taken) < _UUIDS_LISTED:
            self.unanswered.difference_update(taken)
            # A message sent after the turn's last model call starts a turn of its own.
            return not self.unanswered or message.is_error
        return True

    async def finish_query(self, result: ResultMessage) -> None:
        """A query's result: its usage recorded (the one place; see usage.py)."""
        self.result = result
        usage = self._usage_of(self.task.id, result)
        await self.ctx.emit(
            events.agent_step, task_id=self.task.id, step="usage", framework=FRAMEWORK,
            call_id=result.session_id, args=usage.as_dict(), text=usage.summary(),
        )  # fmt: skip
        # On the run's usage ledger too (usage_recorded, the totals, the cost column): one entry
        # per query with Claude Code's own cost. Claude Code reports a query's model calls
        # together, so the entry counts as one call; num_turns in the step above says how many.
        if usage.input_tokens or usage.output_tokens or usage.cost_usd:
            cached = usage.cache_read_input_tokens
            await report_usage(
                ModelUsage(
                    model="+".join(sorted(usage.model_usage)), source=USAGE_SOURCE,
                    input_tokens=usage.input_tokens + cached + usage.cache_creation_input_tokens, cached_tokens=cached,
                    output_tokens=usage.output_tokens, cost_usd=usage.cost_usd, response_id=result.session_id,
                    duration_ms=max(usage.duration_api_ms, 0),
                ),
                session=self.session, task_id=self.task.id,
            )  # fmt: skip

    def outcome(self) -> InvocationResult:
        task_id, status = self.task.id, self._status()
        if status == TaskStatus.COMPLETED:
            return InvocationResult(task_id, text=self.reported or self._text(), stop_reason="task_completed")
        if status.is_terminal:
            return InvocationResult(task_id, stop_reason=f"task_{status.lower()}", error=self.reported or f"task {status.lower()}")
        result = self.result
        if result is not None and result.is_error:
            errors = "; ".join(result.errors or []) or (result.result or "") or f"HTTP {result.api_error_status}"
            return InvocationResult(task_id, stop_reason=result.subtype, error=f"Claude Code: {result.subtype}: {errors}")
        return InvocationResult(task_id, text=self._text(), stop_reason=(result.stop_reason if result else "") or "stop")

    async def max_turns_drift(self) -> None:
        if self.result is not None and self.result.subtype == "error_max_turns":
            detail = f"no final answer after {self.result.num_turns} model calls"
            await self.ctx.steerer.report_drift(self.session, DriftEvent(DriftKind.TOO_MANY_STEPS, DriftSeverity.WARNING, detail, self.task.id))

    def _text(self) -> str:
        return (self.result.result or "") if self.result is not None else ""

    def _status(self) -> TaskStatus:
        plan = self.session.plan
        if plan is not None and plan.has_task(self.task.id):
            return plan.task(self.task.id).status
        return self.task.status

    # -- can_use_tool -----------------------------------------------------------------
    async def permission(self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> PermissionResult:
        await self.deliver_injected()
        call_id = context.tool_use_id or ""
        target = call_id
        if not target or target in self.session.pending_approvals:
            target = f"{call_id or 'call'}@{self.task.id}"
        if tool_name == QUESTION_TOOL:
            return await self._question(tool_input, target)
        prompt = context.title or context.description or ""
        decision = await ask_tool_approval(self.ctx, task_id=self.task.id, tool_name=tool_name, args=tool_input, call_id=target, prompt=prompt)
        if decision.approved:
            if decision.arguments is not None and decision.arguments != tool_input:
                self.ran_with[call_id] = decision.arguments
                return PermissionResultAllow(updated_input=decision.arguments)
            return PermissionResultAllow()
        denial = decision.denial_for_model(tool_name)
        await record_tool_call(
            self.ctx, task_id=self.task.id, framework=FRAMEWORK, tool_name=tool_name, args=tool_input,
            result=denial, outcome="rejected", call_id=call_id,
        )  # fmt: skip
        return PermissionResultDeny(message=denial)

    async def _question(self, tool_input: dict[str, Any], target: str) -> PermissionResult:
        """AskUserQuestion: each of its questions is a goldfive question offering its options'
        labels (Claude Code also takes a typed answer, "Other"), asked in turn; the answers go
        back as the tool's ``answers``, which Claude reads."""
        questions = [q for q in tool_input.get("questions") or [] if isinstance(q, dict) and isinstance(q.get("question"), str)]
        if not questions:
            return PermissionResultDeny(message="AskUserQuestion needs at least one question")
        answers: dict[str, str] = {}
        for n, q in enumerate(questions):
            answer = await ask_question(
                self.ctx, task_id=self.task.id, question=_question_text([q]), options=_labels(q),
                target_id=target if n == 0 else f"{target}#{n + 1}",
            )  # fmt: skip
            answers[q["question"]] = answer.for_model()
        return PermissionResultAllow(updated_input={**tool_input, "answers": answers})

    # -- hooks -----------------------------------------------------------------------
    async def hook(self, data: dict[str, Any]) -> dict[str, Any]:
        """One hook call: recorded as an agent step; the hook's output for Claude Code."""
        event = str(data.get("hook_event_name", ""))
        call_id = str(data.get("tool_use_id") or "")
        tool = str(data.get("tool_name") or "")
        args = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else None
        out: dict[str, Any] = {}
        if event == "PreToolUse":
            await self._hook_step(event, tool, call_id=call_id, args=args)
            denial = await self._budget_hold(tool)
            if denial:
                decision = {"hookEventName": event, "permissionDecision": "deny", "permissionDecisionReason": denial}
                await self.deliver_injected()
                return {"hookSpecificOutput": decision}
        elif event in ("PostToolUse", "PostToolUseFailure"):
            ran = self.ran_with.pop(call_id, None)
            failed = event == "PostToolUseFailure"
            outcome = ("cancelled" if data.get("is_interrupt") else "error") if failed else "ok"
            result = data.get("error") if failed else data.get("tool_response")
            await record_tool_call(
                self.ctx, task_id=self.task.id, framework=FRAMEWORK, tool_name=tool, args=ran or args,
                result=result, outcome=outcome, call_id=call_id,
            )  # fmt: skip
            if ran is not None:
                note = f"A person edited this call's input before approving it; it ran with {to_text(ran)}, not with your input."
                out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": note}}
        elif event in ("SubagentStart", "SubagentStop"):
            agent = str(data.get("agent_type") or "subagent")
            said = str(data.get("last_assistant_message") or "")
            text = f"{agent} started" if event == "SubagentStart" else f"{agent} stopped" + (f": {said}" if said else "")
            agent_id = str(data.get("agent_id") or "")
            await self._hook_step(event, text, call_id=agent_id)
            self._track_subagent(agent_id, started=event == "SubagentStart")
        elif event == "Notification":
            title = str(data.get("title") or data.get("notification_type") or "")
            await self._hook_step(event, f"{title}: {data.get('message', '')}" if title else str(data.get("message", "")))
        await self.deliver_injected()
        return out

    async def _budget_hold(self, tool: str) -> str:
        """Over the run's budget: hold this tool call until a person raises the budget and the
        run goes on (""), or say why it is denied: the hold would outlast the hook's timeout,
        or nobody can raise the budget (no control channel)."""
        guard = self.ctx.budget
        if tool in REPORTING_TOOLS or (guard.reached is None and guard.budget.empty):
            return ""  # goldfive's own reporting tools: a task may still say it is done
        hold_s = max(0.0, PRE_TOOL_TIMEOUT_S - BUDGET_HOLD_MARGIN_S)
        try:
            async with asyncio.timeout(hold_s):
                await before_tool_call(self.task.id)
        except TimeoutError:
            reached = guard.reached
            why = reached.reason if reached is not None else "budget reached"
            return f"{why}: goldfive held this call for {hold_s:.0f} s and nobody raised the budget; it was not run"
        except BudgetExhausted as exc:
            return f"{exc}; the call was not run"
        return ""

    def _track_subagent(self, agent_id: str, *, started: bool) -> None:
        if started:
            self.open_subagents.add(agent_id)
            self._subagents_stopped.clear()
        else:
            self.open_subagents.discard(agent_id)
            if not self.open_subagents:
                self._subagents_stopped.set()

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the SubagentStop hooks of the subagents this
        turn started: Claude Code may send one after the query's result, and the task's steps
        should hold it."""
        if not self._subagents_stopped.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._subagents_stopped.wait(), timeout)

    async def _hook_step(self, event: str, text: str, *, call_id: str = "", args: dict[str, Any] | None = None) -> None:
        await self.ctx.emit(
            events.agent_step, task_id=self.task.id, step="hook", framework=FRAMEWORK, tool_name=event,
            call_id=call_id, args=args, text=text,
        )  # fmt: skip


def _labels(q: dict[str, Any]) -> list[str]:
    return [str(o.get("label")) for o in q.get("options") or [] if isinstance(o, dict) and o.get("label")]


def _question_text(questions: list[dict[str, Any]]) -> str:
    """The prompt: each question with its options (also for a client that shows no options)."""
    lines = []
    for q in questions:
        labels = _labels(q)
        lines.append(q["question"] + (f" ({' / '.join(labels)})" if labels else ""))
    return "\n".join(lines)
