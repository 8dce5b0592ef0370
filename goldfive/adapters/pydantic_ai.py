"""PydanticAIAdapter: a PydanticAI ``Agent`` as it is, one goldfive task = one agent run.

The run's input is :func:`goldfive.adapters.common.task_input` (goals, plan, completed results,
the task); its final output, as text, is the task's result. The conversation is PydanticAI's own
message history, kept per goldfive run: each task's run continues it (``message_history=``,
``conversation_id=`` the goldfive run id), so the agent remembers what it did in earlier tasks;
the first task's input carries the goals, the plan and the results, a later task's only what
changed since (``goldfive.adapters.task_prompt.Told``).

Everything goes through PydanticAI's public API, for one run only, so the user's ``Agent`` is
never changed:

- the model is offered one reporting tool, ``goldfive_report`` with a ``kind``
  (``goldfive.run.report_tool``, as the OpenAI Agents adapter): the run's final answer is the
  task's result, so there is no report_task_completed to offer. It goes among the agent's own
  function tools for the run (``agent.override(tools=...)``, a context variable: other runs
  keep the agent as it is), so PydanticAI has one function toolset to combine, not two; an
  agent whose function toolset carries instructions, or one that is not a plain ``Agent``,
  gets it as a one-tool toolset (``toolsets=``) instead, which keeps them;
- a reporting tool the model calls by its own name (report_task_progress, ...: an older prompt
  or a model's habit) is not offered, and PydanticAI answers a call to a tool it was not given
  with a retry ("Unknown tool name ..."), which counts against the run's retries. So the
  adapter looks at each model answer before its calls run: a call that a ``kind`` stands for
  is rewritten into the ``goldfive_report`` call it means (the history then shows that call),
  and ``report_task_completed`` runs at once, the task ending with its result and the run
  before its next model call, the model's history holding the tool's answer instead of the
  retry. ``report_task_started`` gets PydanticAI's answer (goldfive starts the task itself);
- a call PydanticAI defers for approval (``requires_approval=True``, an
  ``ApprovalRequiredToolset``, a tool raising ``ApprovalRequired``) ends the run with
  ``DeferredToolRequests`` (added to the run's ``output_type``): one goldfive approval per call
  under PydanticAI's own ``tool_call_id``, all asked at once, then the run is resumed with
  ``deferred_tool_results=`` (the usage carried over): approve → ``ToolApproved`` (the person's
  edited arguments as ``override_args``), anything else → ``ToolDenied`` with the reason, which
  is what the model reads as the call's return. An agent whose runs may not set an output type
  (output validators) gets the same decisions inside the run from the :class:`GoldfiveSteering`
  capability's ``handle_deferred_tool_calls``; a capability on every run would cost about a
  tenth of a run (PydanticAI composes the run's capabilities and dispatches each hook through
  them);
- the adapter drives ``agent.iter`` node by node: before each model request it drains the
  injected messages into ``AgentRun.enqueue`` (they go into that request and stay in the
  history); it records each model answer (``CallToolsNode``) and each tool result (the next
  ``ModelRequestNode``) as ``agent_step`` events; when a reporting tool ends the task
  (completed / failed) the run stops before its next model call, as the reference adapter does.
  (Hooks such as ``before_model_request``, ``after_model_request`` or ``wrap_tool_execute``
  could do the same, but overriding them makes PydanticAI re-process the whole history on every
  request: ``after_model_request`` alone made a 100-run conversation about 4x slower.)

Cancelling ``invoke`` (CANCEL, STEER) cancels the task driving ``agent.iter``: PydanticAI tears
down the model request in flight and its tool tasks, pending approvals are withdrawn, and the
``CancelledError`` propagates; the history keeps only completed runs.
"""

from __future__ import annotations

import asyncio
import json
import math
import weakref
from collections.abc import Mapping
from contextlib import nullcontext
from contextvars import ContextVar
from typing import Any, ContextManager

from pydantic_ai import Agent
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import AgentRunError, UsageLimitExceeded, UserError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.tools import (
    DeferredToolApprovalResult,
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    Tool,
    ToolApproved,
    ToolDenied,
)
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, ToolsetTool
from pydantic_ai.usage import UsageLimits

from goldfive.adapters.common import ask_tool_approval, framework_span, record_model_turn, record_tool_call, task_input, to_text
from goldfive.adapters.task_prompt import Told
from goldfive.usage import ModelUsage, report_usage
from goldfive.budget.gate import before_model_call
from goldfive.results import InvocationResult
from goldfive.run.context import RunContext as GoldfiveRun
from goldfive.run.current_run import current, read_injected
from goldfive.run.report_tool import (
    REPORT_TOOL_DESCRIPTION,
    REPORT_TOOL_NAME,
    REPORT_TOOL_PARAMETERS,
    REPORTING_TEXT,
    report,
    report_args,
)
from goldfive.run.tools import REPORTING_TOOL_NAMES, ReportingToolSpec
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session, Task, TaskStatus

__all__ = ["GoldfiveSteering", "PydanticAIAdapter"]


class PydanticAIAdapter:
    """An AgentAdapter for a PydanticAI agent.

    ``deps`` are passed to every run (the agent's ``deps_type``); ``usage_limits`` bound each
    run (PydanticAI's default otherwise); ``memory=False`` starts every task from an empty
    history instead of continuing the run's conversation.
    """

    #: The agent's tools are its own; goldfive adds only its reporting tool.
    user_tools: tuple[Any, ...] = ()

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
        # id(session) -> (the session, its conversation, what the conversation was told of the
        # run); a dead reference is a finished run.
        self._histories: dict[int, tuple[weakref.ref[Session], list[ModelMessage], Told]] = {}
        #: (the run's output type, or None: see _output_type), worked out once.
        self._output: tuple[Any] | None = None
        #: The agent's own output type has DeferredToolRequests: its runs end with them.
        self._defers = False

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
        ctx = current()
        agent = self.agent
        own = agent.instrument if isinstance(agent, Agent) else None
        instrumented = bool(own if own is not None else Agent._instrument_default)
        offer, toolsets, tools = self._offer()
        steering = GoldfiveSteering(ctx, task.id, instrumented=instrumented, own_tools=tools)
        told = self._conversation(session)[1] if self.memory else None
        history = list(self.history(session)) if self.memory else []
        # In a conversation the input counts as told once the run's messages are kept (below).
        prompt: str | None = task_input(session, task, told, keep=False, reporting=REPORTING_TEXT)
        output_type = self._output_type()
        options: dict[str, Any] = {"deps": self.deps, "usage_limits": self.usage_limits}
        if toolsets:
            options["toolsets"] = toolsets
        if output_type is not None:
            options["output_type"] = output_type
        elif not self._defers:
            options["capabilities"] = [steering]  # approvals answered inline (see _output_type)
        new: list[ModelMessage] = []
        output: Any = None
        results: DeferredToolResults | None = None
        notes: list[str] = []
        bound = CURRENT.set(steering)
        try:
            with offer:
                while True:
                    # One run, or (after approvals) the run resumed with the decisions, as
                    # PydanticAI documents for DeferredToolRequests; the usage carries over so
                    # the limits hold.
                    ran, output, options["usage"], ended = await self._run(
                        session, task, steering, prompt, [*history, *new], results, notes, conversation=not history and not new, **options
                    )
                    new.extend(ran)
                    if ended or not isinstance(output, DeferredToolRequests) or not output.approvals or output.calls:
                        break
                    results, notes = await steering.decide(output)
                    prompt = None
        except UsageLimitExceeded as exc:
            await _drift(ctx.steerer, session, DriftKind.TOO_MANY_STEPS, str(exc), task.id)
            return InvocationResult(task.id, stop_reason="max_steps", error=f"step limit exceeded: {exc}")
        except (AgentRunError, UserError) as exc:
            # The framework refused or the model failed: the task fails with PydanticAI's words.
            return InvocationResult(task.id, stop_reason="model_error", error=f"{type(exc).__name__}: {exc}")
        finally:
            CURRENT.reset(bound)
        if told is not None:
            self._remember(session, new)
            if new:
                told.kept(task.id)
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

    def _offer(self) -> tuple[ContextManager[Any], list[AbstractToolset[Any]], Mapping[str, Any]]:
        """How the run is offered ``goldfive_report``: (a context to run it in, the toolsets to
        pass it, the agent's function tools by name).

        Among the agent's own function tools (an ``override(tools=...)`` around the run:
        PydanticAI combines the run's toolsets at every step through an anyio task group, which
        a second toolset would cost), or, when the agent is not a plain ``Agent`` or its function
        toolset carries instructions (which a toolset rebuilt from its tools would drop), as a
        one-tool toolset of its own. An agent with a tool of that name keeps its own."""
        agent = self.agent
        if not isinstance(agent, Agent):
            return nullcontext(), [REPORT_TOOLSET], {}
        functions = agent.toolsets[0]  # (the user's own override(tools=...) when there is one)
        if not isinstance(functions, FunctionToolset):
            return nullcontext(), [REPORT_TOOLSET], {}
        tools: Mapping[str, Any] = functions.tools
        if REPORT_TOOL_NAME in tools:
            return nullcontext(), [], tools
        # (A private field: when PydanticAI renames it, the toolset way is taken, which keeps them.)
        if getattr(functions, "_instructions", True):
            return nullcontext(), [REPORT_TOOLSET], tools
        return agent.override(tools=[*tools.values(), REPORT_TOOL]), [], tools

    async def _run(
        self,
        session: Session,
        task: Task,
        steering: GoldfiveSteering,
        prompt: str | None,
        history: list[ModelMessage],
        results: DeferredToolResults | None,
        notes: list[str],
        *,
        conversation: bool,
        **options: Any,
    ) -> tuple[list[ModelMessage], Any, Any, bool]:
        """One ``agent.iter``, driven node by node: (its new messages, its output, its usage,
        whether a reporting tool ended the task)."""
        async with self.agent.iter(
            prompt,
            message_history=history,
            conversation_id=session.run_id if conversation else None,
            deferred_tool_results=results,
            **options,
        ) as run:
            # A resumed run starts with the answer whose calls were decided (recorded already).
            resumed = results is not None
            async for node in run:
                if Agent.is_call_tools_node(node):
                    if resumed:
                        resumed = False
                        continue
                    await steering.turn(node.model_response)
                elif Agent.is_model_request_node(node):
                    steering.answer_old_names(node.request)
                    await steering.results(node.request)
                    if _status(session, task).is_terminal:
                        # A reporting tool ended the task: no further model call. The tool
                        # returns waiting in this node close the calls in the history.
                        return [*run.new_messages(), node.request], None, run.usage, True
                    # Over budget the run pauses and this request waits (docs/cost.md#budgets).
                    await before_model_call(task.id)
                    # INJECT_MESSAGE: into the request this node is about to send; after
                    # approvals, what the model must know of arguments a person edited.
                    texts = [*notes, *await read_injected(session, task.id)]
                    notes = []
                    if texts:
                        run.enqueue(*texts)
            ran = run.new_messages()
            if ran and isinstance(ran[-1], ModelRequest):
                # A run ending in DeferredToolRequests keeps the results of the calls that ran.
                await steering.results(ran[-1])
            return ran, run.result.output if run.result is not None else None, run.usage, False

    def _output_type(self) -> Any:
        """The run's output type with ``DeferredToolRequests`` added, so a call needing approval
        ends the run (PydanticAI's deferred tools) and the adapter resumes it with the decisions;
        None when the agent's own output type has it already, or when a run may not set one (an
        agent with output validators, or not a plain ``Agent``): then the approvals go through
        the :class:`GoldfiveSteering` capability, answered inside the run. (A capability makes
        PydanticAI compose the run's capabilities and dispatch every hook through them, which
        cost about a tenth of a run on its test model.)"""
        if self._output is None:
            agent = self.agent
            spec = agent.output_type
            specs = list(spec) if isinstance(spec, (list, tuple)) else [spec]
            if DeferredToolRequests in specs:
                self._output, self._defers = (None,), True
            elif not isinstance(agent, Agent) or getattr(agent, "_output_validators", None):
                self._output = (None,)
            else:
                self._output = ([*specs, DeferredToolRequests],)
        return self._output[0]

    def _conversation(self, session: Session) -> tuple[list[ModelMessage], Told]:
        # Dead runs' conversations go first: a long-lived adapter must not keep them all.
        for key in [k for k, (ref, _, _) in self._histories.items() if ref() is None]:
            del self._histories[key]
        entry = self._histories.get(id(session))
        if entry is None or entry[0]() is not session:
            entry = (weakref.ref(session), [], Told(REPORTING_TEXT))
            self._histories[id(session)] = entry
        return entry[1], entry[2]

    def _remember(self, session: Session, new: list[ModelMessage]) -> None:
        # Appended, not replaced: tasks of one run may run in parallel, each adds its own turn.
        self._conversation(session)[0].extend(new)


def _status(session: Session, task: Task) -> TaskStatus:
    plan = session.plan
    if plan is not None and plan.has_task(task.id):
        return plan.task(task.id).status
    return task.status


async def _drift(steerer: Any, session: Session, kind: DriftKind, detail: str, task_id: str) -> None:
    await steerer.report_drift(session, DriftEvent(kind, DriftSeverity.WARNING, detail, task_id))


# -- what goldfive adds to one run ---------------------------------------------------------

#: The ``framework`` field of this adapter's ``agent_step`` events.
FRAMEWORK = "pydantic_ai"

_ENDING_TOOLS = ("report_task_completed", "report_task_failed")


class GoldfiveSteering(AbstractCapability[Any]):
    """The goldfive side of one PydanticAI run (one goldfive task)."""

    def __init__(
        self,
        run: GoldfiveRun,
        task_id: str,
        specs: dict[str, ReportingToolSpec] | None = None,
        *,
        instrumented: bool = False,
        own_tools: Mapping[str, Any] | None = None,
    ) -> None:
        self.run = run
        self.task_id = task_id
        self._specs = specs
        #: The agent emits its own OpenTelemetry spans (Agent(instrument=...) or instrument_all).
        self.instrumented = instrumented
        #: The agent's function tools by name: a reporting tool's name among them is the agent's.
        self.own_tools: Mapping[str, Any] = own_tools or {}
        #: What ended the task through a report (failed; completed by its old name): the task's
        #: result or reason.
        self.reported = ""
        #: The calls of the model's latest answers not yet seen answered, by tool call id.
        self._calls: dict[str, ToolCallPart] = {}
        #: Calls a person approved with edited arguments: call id -> the arguments that ran.
        self._ran_with: dict[str, dict[str, Any]] = {}
        #: What goldfive answered to a reporting tool called by its own name, by call id.
        self._answers: dict[str, tuple[str, dict[str, Any]]] = {}

    @property
    def specs(self) -> dict[str, ReportingToolSpec]:
        """The task's reporting tools (bound the first time a report needs them)."""
        if self._specs is None:
            self._specs = self.run.tools_for(self.task_id)
        return self._specs

    async def report(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Run ``goldfive_report`` for this task (called by the shared tool)."""
        name, out = await report(self.specs, kwargs)
        if name in _ENDING_TOOLS and out.get("ok"):
            self.reported = str(kwargs.get("detail") or "")
        return out

    async def _old_name(self, call: ToolCallPart) -> None:
        """A reporting tool called by its own name (it is not offered): rewritten into the
        ``goldfive_report`` call a kind stands for, before PydanticAI runs the answer's calls;
        ``report_task_completed`` run now, its answer given in place of PydanticAI's "unknown
        tool" (``answer_old_names``)."""
        name = call.tool_name
        if name in self.own_tools:
            return  # the agent's own tool of that name
        try:
            args = call.args_as_dict()
        except ValueError:
            return  # arguments that are not JSON: PydanticAI's answer stands
        mapped = report_args(name, args)
        if mapped is not None:
            call.tool_name, call.args = REPORT_TOOL_NAME, mapped
        elif name == "report_task_completed":
            out = await self.specs[name](**args)
            if out.get("ok"):
                self.reported = str(args.get("result") or "")
            self._answers[call.tool_call_id] = (name, out)

    def answer_old_names(self, request: ModelRequest) -> None:
        """Put what goldfive answered to a reporting tool called by its own name in ``request``
        (the next model request) instead of PydanticAI's "unknown tool" retry."""
        if not self._answers:
            return
        parts = request.parts
        for i, part in enumerate(parts):
            call_id = getattr(part, "tool_call_id", None)
            if not isinstance(call_id, str) or call_id not in self._answers or not isinstance(parts, list):
                continue
            name, out = self._answers.pop(call_id)
            parts[i] = ToolReturnPart(tool_name=name, content=out, tool_call_id=call_id)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # per-run only, never built from an agent spec

    # -- visibility ------------------------------------------------------------------
    async def turn(self, response: ModelResponse) -> None:
        """One model answer (a ``CallToolsNode``'s response), before its calls run."""
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        for call in calls:
            if call.tool_name in REPORTING_TOOL_NAMES:
                await self._old_name(call)
        self._calls.update((c.tool_call_id, c) for c in calls)
        await self._report_usage(response)
        await record_model_turn(self.run, task_id=self.task_id, framework=FRAMEWORK, text=text, tool_calls=[c.tool_name for c in calls])

    async def _report_usage(self, response: ModelResponse) -> None:
        """The response's RequestUsage (its input_tokens include the cache reads, as goldfive's)."""
        u = response.usage
        if not (u.input_tokens or u.output_tokens):
            return
        trace_id, span_id = framework_span() if self.instrumented else ("", "")
        usage = ModelUsage(
            model=response.model_name or "", input_tokens=u.input_tokens, output_tokens=u.output_tokens,
            cached_tokens=min(u.cache_read_tokens, u.input_tokens), source=FRAMEWORK,
            response_id=response.provider_response_id or "", otel_trace_id=trace_id, otel_span_id=span_id,
        )  # fmt: skip
        await report_usage(usage, session=self.run.session, task_id=self.task_id)

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
    async def decide(self, requests: DeferredToolRequests) -> tuple[DeferredToolResults, list[str]]:
        """Ask a person about each call of ``requests.approvals``: the results to resume the run
        with, and what the model must be told (arguments a person edited before approving).

        One approval per call, all pending at once (the approvals pane shows them side by side);
        the task group withdraws the ones still open if the run is cancelled."""
        async with asyncio.TaskGroup() as group:
            asked = {call.tool_call_id: group.create_task(self._decide(call)) for call in requests.approvals}
        notes = [note for task in asked.values() if (note := task.result()[1])]
        return requests.build_results(approvals={cid: task.result()[0] for cid, task in asked.items()}), notes

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """The same inside the run, when the adapter cannot let the run end with the requests."""
        if not requests.approvals:
            return None  # external calls are not goldfive's to answer; PydanticAI reports them
        results, notes = await self.decide(requests)
        for note in notes:
            ctx.enqueue(note)
        return results

    async def _decide(self, call: ToolCallPart) -> tuple[DeferredToolApprovalResult, str]:
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
                note = (
                    f"A person edited the arguments of your call {call.tool_call_id} to {call.tool_name} before "
                    f"approving it; it ran with {_json(decision.arguments)} instead of {_json(args)}."
                )
                return ToolApproved(override_args=decision.arguments), note
            return ToolApproved(), ""
        denial = decision.denial_for_model(call.tool_name)
        await self._record(call, args, denial, "rejected")
        return ToolDenied(denial), ""

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


class _ListedOnce(FunctionToolset[Any]):
    """A ``FunctionToolset`` that lists its tools once: ``goldfive_report`` has no ``prepare``
    and a fixed schema, so what ``get_tools`` builds (a run context copy and a tool definition
    per tool, before every model request) is the same every time but for the run's default
    retry count, which keys the cache."""

    def __init__(self, tools: list[Tool[Any]]) -> None:
        super().__init__(tools)
        self._listed: dict[int, dict[str, ToolsetTool[Any]]] = {}

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        listed = self._listed.get(ctx.max_retries)
        if listed is None:
            listed = self._listed[ctx.max_retries] = await super().get_tools(ctx)
        return dict(listed)


async def _report(**kwargs: Any) -> dict[str, Any]:
    steering = CURRENT.get()
    if steering is None:  # only reachable if the tool is used outside the adapter
        return {"ok": False, "error": f"{REPORT_TOOL_NAME}: no goldfive task is running"}
    return await steering.report(kwargs)


#: ``goldfive_report``, one object for every run (it finds its task through :data:`CURRENT`).
#: ``from_schema``: ``report`` checks its own arguments and answers {"ok": False, "error"}.
REPORT_TOOL: Tool[Any] = Tool.from_schema(
    _report, name=REPORT_TOOL_NAME, description=REPORT_TOOL_DESCRIPTION, json_schema=REPORT_TOOL_PARAMETERS
)
# No time limit: an approval or a question waits for a person (an agent's tool_timeout would
# otherwise apply to it among the agent's function tools).
REPORT_TOOL.timeout = math.inf

#: ``goldfive_report`` as a toolset of its own, for agents it cannot join (``_offer``).
REPORT_TOOLSET = _ListedOnce([REPORT_TOOL])


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
