"""What goldfive adds to one PydanticAI run: a per-run capability and the reporting toolset.

Everything goes through PydanticAI's own public extension points, passed to ``agent.iter`` for
one run only, so the user's ``Agent`` object is never changed:

- ``before_model_request`` drains goldfive's injected messages and hands each to
  ``RunContext.enqueue``: it goes into the request being prepared and stays in the history;
- ``handle_deferred_tool_calls`` answers the calls PydanticAI defers for approval (tools with
  ``requires_approval=True``, an ``ApprovalRequiredToolset``, a tool raising ``ApprovalRequired``)
  inline, one goldfive approval per call under PydanticAI's own ``tool_call_id``, all asked at once;
  approve → ``ToolApproved`` (with the person's edited arguments as ``override_args``), anything
  else → ``ToolDenied`` carrying the reason, which is what the model reads as the call's return;
- ``after_model_request`` / ``wrap_tool_execute`` record each model answer and each tool call
  (the reporting tools included) as ``agent_step`` events.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import ValidatedToolArgs, WrapToolExecuteHandler
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import (
    DeferredToolApprovalResult,
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    Tool,
    ToolApproved,
    ToolDefinition,
    ToolDenied,
)
from pydantic_ai.toolsets import FunctionToolset

from goldfive.adapters.common import ask_tool_approval, record_model_turn, record_tool_call
from goldfive.run.context import RunContext as GoldfiveRun
from goldfive.run.context import read_injected
from goldfive.run.tools import ReportingToolSpec

__all__ = ["FRAMEWORK", "GoldfiveSteering", "reporting_toolset"]

#: The ``framework`` field of this adapter's ``agent_step`` events.
FRAMEWORK = "pydantic_ai"

_ENDING_TOOLS = ("report_task_completed", "report_task_failed")


class GoldfiveSteering(AbstractCapability[Any]):
    """The goldfive side of one PydanticAI run (one goldfive task)."""

    def __init__(self, run: GoldfiveRun, task_id: str) -> None:
        self.run = run
        self.task_id = task_id
        #: What report_task_completed / report_task_failed said (the task's result or reason).
        self.reported = ""
        #: Calls a person approved with edited arguments: call id -> the arguments the model sent.
        self._edited: dict[str, dict[str, Any]] = {}

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # per-run only, never built from an agent spec

    # -- INJECT_MESSAGE --------------------------------------------------------------
    async def before_model_request(self, ctx: RunContext[Any], request_context: ModelRequestContext) -> ModelRequestContext:
        texts = await read_injected(self.run.session, self.task_id)
        if texts:
            ctx.enqueue(*texts)
        return request_context

    # -- visibility ------------------------------------------------------------------
    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        calls = [p.tool_name for p in response.parts if isinstance(p, ToolCallPart)]
        await record_model_turn(self.run, task_id=self.task_id, framework=FRAMEWORK, text=text, tool_calls=calls)
        return response

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        original = self._edited.pop(call.tool_call_id, None)
        if original is not None:
            # The model must know the call it made is not the call that ran.
            ctx.enqueue(
                f"A person edited the arguments of your call {call.tool_call_id} to {call.tool_name} before "
                f"approving it; it ran with {_json(args)} instead of {_json(original)}."
            )
        try:
            result = await handler(args)
        except (ApprovalRequired, CallDeferred):
            raise  # not an outcome: the call waits for a decision (handle_deferred_tool_calls)
        except Exception as exc:
            await self._record(call, args, f"{type(exc).__name__}: {exc}", "error")
            raise
        await self._record(call, args, result, "ok")
        return result

    # -- tool approval ---------------------------------------------------------------
    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        if not requests.approvals:
            return None  # external calls are not goldfive's to answer; PydanticAI reports them
        # One approval per call, all pending at once (the approvals pane shows them side by
        # side); the task group withdraws the ones still open if the run is cancelled.
        async with asyncio.TaskGroup() as group:
            asked = {call.tool_call_id: group.create_task(self._decide(call)) for call in requests.approvals}
        return requests.build_results(approvals={cid: task.result() for cid, task in asked.items()})

    async def _decide(self, call: ToolCallPart) -> DeferredToolApprovalResult:
        args = call.args_as_dict()
        target = call.tool_call_id
        if target in self.run.session.pending_approvals:
            # Another task's run reused the id (a test model's fixed ids, parallel tasks).
            target = f"{target}@{self.task_id}"
        decision = await ask_tool_approval(self.run, task_id=self.task_id, tool_name=call.tool_name, args=args, call_id=target)
        if decision.approved:
            if decision.arguments is not None and decision.arguments != args:
                self._edited[call.tool_call_id] = args
                return ToolApproved(override_args=decision.arguments)
            return ToolApproved()
        denial = decision.denial_for_model(call.tool_name)
        await self._record(call, args, denial, "rejected")
        return ToolDenied(denial)

    async def _record(self, call: ToolCallPart, args: dict[str, Any], result: Any, outcome: str) -> None:
        await record_tool_call(
            self.run,
            task_id=self.task_id,
            framework=FRAMEWORK,
            tool_name=call.tool_name,
            args=args,
            result=result,
            outcome=outcome,
            call_id=call.tool_call_id,
        )


def reporting_toolset(specs: dict[str, ReportingToolSpec], steering: GoldfiveSteering) -> FunctionToolset[Any]:
    """The reporting tools as a PydanticAI toolset for one run (``toolsets=`` of ``agent.iter``)."""
    return FunctionToolset([_tool(spec, steering) for spec in specs.values()])


def _tool(spec: ReportingToolSpec, steering: GoldfiveSteering) -> Tool[Any]:
    async def call(**kwargs: Any) -> dict[str, Any]:
        out = await spec(**kwargs)
        if spec.name in _ENDING_TOOLS and out.get("ok"):
            steering.reported = str(kwargs.get("result") or kwargs.get("reason") or "")
        return out

    # from_schema: the spec validates its own arguments and answers {"ok": False, "error"}.
    return Tool.from_schema(call, name=spec.name, description=spec.description, json_schema=spec.parameters)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
