"""What goldfive adds to one PydanticAI run: a per-run capability and the reporting toolset.

Everything goes through PydanticAI's public API, for one run only, so the user's ``Agent``
object is never changed:

- the capability's ``handle_deferred_tool_calls`` answers the calls PydanticAI defers for approval
  (tools with ``requires_approval=True``, an ``ApprovalRequiredToolset``, a tool raising
  ``ApprovalRequired``) inline, one goldfive approval per call under PydanticAI's own
  ``tool_call_id``, all asked at once; approve → ``ToolApproved`` (with the person's edited
  arguments as ``override_args``), anything else → ``ToolDenied`` carrying the reason, which is
  what the model reads as the call's return;
- the adapter's loop over ``agent.iter`` nodes hands each model response (``CallToolsNode``) and
  each request carrying tool results (``ModelRequestNode``) to :meth:`GoldfiveSteering.turn` /
  :meth:`GoldfiveSteering.results`, which record them as ``agent_step`` events. (Hooks such as
  ``after_model_request`` or ``wrap_tool_execute`` would do the same, but overriding them makes
  PydanticAI re-process the whole history on every request: measured several times slower on
  a 100-task run, see bench/bench_adapter_pydantic_ai.py.)
"""

from __future__ import annotations

import asyncio
import json
from contextvars import ContextVar
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.tools import (
    DeferredToolApprovalResult,
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    Tool,
    ToolApproved,
    ToolDenied,
)
from pydantic_ai.toolsets import FunctionToolset

from goldfive.adapters.common import ask_tool_approval, record_model_turn, record_tool_call
from goldfive.run.context import RunContext as GoldfiveRun
from goldfive.run.tools import ReportingToolSpec

__all__ = ["CURRENT", "FRAMEWORK", "GoldfiveSteering", "ReportingToolset"]

#: The ``framework`` field of this adapter's ``agent_step`` events.
FRAMEWORK = "pydantic_ai"

_ENDING_TOOLS = ("report_task_completed", "report_task_failed")


class GoldfiveSteering(AbstractCapability[Any]):
    """The goldfive side of one PydanticAI run (one goldfive task)."""

    def __init__(self, run: GoldfiveRun, task_id: str, specs: dict[str, ReportingToolSpec]) -> None:
        self.run = run
        self.task_id = task_id
        self.specs = specs
        #: What report_task_completed / report_task_failed said (the task's result or reason).
        self.reported = ""
        #: The calls of the model's latest answers not yet seen answered, by tool call id.
        self._calls: dict[str, ToolCallPart] = {}
        #: Calls a person approved with edited arguments: call id -> the arguments that ran.
        self._ran_with: dict[str, dict[str, Any]] = {}

    async def report(self, name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Run the reporting tool ``name`` for this task (called by the shared toolset)."""
        spec = self.specs.get(name)
        if spec is None:
            return {"ok": False, "error": f"{name} is not offered to task {self.task_id}"}
        out = await spec(**kwargs)
        if name in _ENDING_TOOLS and out.get("ok"):
            self.reported = str(kwargs.get("result") or kwargs.get("reason") or "")
        return out

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # per-run only, never built from an agent spec

    # -- visibility ------------------------------------------------------------------
    async def turn(self, response: ModelResponse) -> None:
        """One model answer (a ``CallToolsNode``'s response)."""
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        self._calls.update((c.tool_call_id, c) for c in calls)
        await record_model_turn(self.run, task_id=self.task_id, framework=FRAMEWORK, text=text, tool_calls=[c.tool_name for c in calls])

    async def results(self, request: ModelRequest) -> None:
        """The tool calls answered in ``request`` (the next ``ModelRequestNode``'s request)."""
        for part in request.parts:
            call_id = getattr(part, "tool_call_id", None)
            call = self._calls.pop(call_id, None) if isinstance(call_id, str) else None
            if call is None:
                continue
            args = self._ran_with.pop(call.tool_call_id, None) or call.args_as_dict()
            if isinstance(part, ToolReturnPart):
                if part.outcome == "denied":
                    continue  # recorded as rejected when it was decided
                outcome = "ok" if part.outcome == "success" else "error"
                await self._record(call, args, part.content, outcome)
            else:  # a retry: the tool (or its arguments' validation) asked the model to try again
                await self._record(call, args, getattr(part, "content", ""), "error")

    # -- tool approval ---------------------------------------------------------------
    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        if not requests.approvals:
            return None  # external calls are not goldfive's to answer; PydanticAI reports them
        # One approval per call, all pending at once (the approvals pane shows them side by
        # side); the task group withdraws the ones still open if the run is cancelled.
        async with asyncio.TaskGroup() as group:
            asked = {call.tool_call_id: group.create_task(self._decide(ctx, call)) for call in requests.approvals}
        return requests.build_results(approvals={cid: task.result() for cid, task in asked.items()})

    async def _decide(self, ctx: RunContext[Any], call: ToolCallPart) -> DeferredToolApprovalResult:
        args = call.args_as_dict()
        target = call.tool_call_id
        if target in self.run.session.pending_approvals:
            # Another task's run reused the id (a test model's fixed ids, parallel tasks).
            target = f"{target}@{self.task_id}"
        decision = await ask_tool_approval(self.run, task_id=self.task_id, tool_name=call.tool_name, args=args, call_id=target)
        if decision.approved:
            if decision.arguments is not None and decision.arguments != args:
                self._ran_with[call.tool_call_id] = decision.arguments
                # The model must know the call it made is not the call that ran.
                ctx.enqueue(
                    f"A person edited the arguments of your call {call.tool_call_id} to {call.tool_name} before "
                    f"approving it; it ran with {_json(decision.arguments)} instead of {_json(args)}."
                )
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


#: The steering of the run the current asyncio task drives (set by the adapter around a run).
CURRENT: ContextVar[GoldfiveSteering | None] = ContextVar("goldfive_pydantic_ai_steering", default=None)


class ReportingToolset:
    """The reporting tools as one PydanticAI ``FunctionToolset``, built once per set of tools
    and bound to the running task through :data:`CURRENT`: a toolset per task would rebuild
    eight tool schemas every task."""

    def __init__(self) -> None:
        self._key: tuple[tuple[str, str], ...] = ()
        self._toolset: FunctionToolset[Any] | None = None

    def for_specs(self, specs: dict[str, ReportingToolSpec]) -> FunctionToolset[Any]:
        key = tuple((spec.name, spec.description) for spec in specs.values())
        if self._toolset is None or key != self._key:
            self._key, self._toolset = key, FunctionToolset([_tool(spec) for spec in specs.values()])
        return self._toolset


def _tool(spec: ReportingToolSpec) -> Tool[Any]:
    name = spec.name

    async def call(**kwargs: Any) -> dict[str, Any]:
        steering = CURRENT.get()
        if steering is None:  # only reachable if the toolset is used outside the adapter
            return {"ok": False, "error": f"{name}: no goldfive task is running"}
        return await steering.report(name, kwargs)

    # from_schema: the spec validates its own arguments and answers {"ok": False, "error"}.
    return Tool.from_schema(call, name=name, description=spec.description, json_schema=spec.parameters)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
