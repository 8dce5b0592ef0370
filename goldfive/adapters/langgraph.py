"""LangGraphAdapter: a goldfive task is one run of a compiled LangGraph graph.

The graph is any ``CompiledStateGraph`` whose state has a ``messages`` key (a
``create_react_agent`` graph, or a user's ``StateGraph``). What the adapter uses, all LangGraph's
own public mechanisms:

- **One thread per goldfive run.** Every task of a run streams on the same ``thread_id``, so the
  graph's checkpointer keeps the conversation across the run's tasks. A graph compiled without a
  checkpointer is copied with an ``InMemorySaver`` (``Pregel.copy``; the user's object is not
  changed) whose thread is deleted when the run is gone. Tasks that run at the same time
  (parallel executor) cannot share a thread: a task that finds the run's thread busy runs on a
  thread of its own. ``LangGraphAdapter(graph, memory=False)`` gives every task a fresh thread.
- **Approvals are ``interrupt()``.** A tool that needs a person interrupts with LangGraph's
  human-in-the-loop request (``{"action_request": {"action": name, "args": {...}}, ...}``);
  :func:`ask_first` is a ``ToolNode`` ``awrap_tool_call`` that does it for the named tools. The
  adapter turns each interrupt into a goldfive approval and resumes the thread with
  ``Command(resume={interrupt_id: HumanResponse})``: ``accept``, ``edit`` (a person's edited
  arguments; the tool runs with them) or ``response`` (the denial text, which the model gets as
  the tool's result). Parallel calls interrupt separately, each with its own id.
- **The reporting tools and injected messages are part of the graph.** A compiled graph's tools
  (the model's binding and the ``ToolNode``) are fixed when it is compiled; nothing can add a tool
  to it afterwards. So the graph is built with :func:`goldfive_tools` among its tools and
  :func:`goldfive_pre_model_hook` as ``create_react_agent``'s ``pre_model_hook`` (a hand-written
  graph awaits :func:`injected_messages` in its model node). They find the run and the task in
  the run's config; outside goldfive the tools say so and the hook adds nothing. A graph built
  without them still runs: injected messages then reach it only when a run starts or resumes.
- **Visibility** comes from ``astream(stream_mode="updates")``: each new AI message is a model
  turn, each ToolMessage a tool call. Cancelling ``invoke`` closes the stream (``aclosing``),
  which cancels LangGraph's running nodes.
"""

from __future__ import annotations

import asyncio
import uuid
import weakref
from collections.abc import Iterable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, Interrupt, interrupt

from goldfive.adapters.common import ToolDecision, ask_tool_approval, record_model_turn, record_tool_call, task_input, to_text
from goldfive.usage import ModelUsage, report_usage

#: The ``source`` of the usage this adapter records (the figures are LangChain's usage_metadata).
USAGE_SOURCE = "langchain"
from goldfive.results import InvocationResult
from goldfive.run.context import RunContext, context_of, read_injected
from goldfive.run.tools import REPORTING_TOOL_NAMES, build_tools
from goldfive.types import Session, Task, TaskStatus

__all__ = ["LangGraphAdapter", "ask_first", "goldfive_pre_model_hook", "goldfive_tools", "injected_messages"]

FRAMEWORK = "langgraph"
#: The key of the run's config under ``configurable`` that tells goldfive's tools which task runs.
CONFIG_KEY = "goldfive"


@dataclass(frozen=True)
class _Binding:
    session: Session
    task_id: str


def _binding(config: RunnableConfig | None) -> _Binding | None:
    found = ((config or {}).get("configurable") or {}).get(CONFIG_KEY)
    return found if isinstance(found, _Binding) else None


# -- what the graph is built with ------------------------------------------------------------


def goldfive_tools() -> list[BaseTool]:
    """The eight reporting tools as LangChain tools, for the graph's model and ToolNode."""
    # The schemas do not depend on the run: build them once from a placeholder context.
    specs = build_tools(cast(RunContext, SimpleNamespace(session=None, steerer=None, user_tools=[])), "")
    return [_reporting_tool(specs[name].name, specs[name].description, specs[name].parameters) for name in REPORTING_TOOL_NAMES]


def _reporting_tool(name: str, description: str, parameters: dict[str, Any]) -> BaseTool:
    async def run(config: RunnableConfig, **kwargs: Any) -> dict[str, Any]:
        bound = _binding(config)
        if bound is None:
            return {"ok": False, "error": f"{name}: this graph is not running under goldfive"}
        spec = context_of(bound.session).tools_for(bound.task_id).get(name)
        if spec is None:
            return {"ok": False, "error": f"{name}: not available in this run"}
        return await spec(**kwargs)

    return StructuredTool(name=name, description=description, args_schema=parameters, coroutine=run)


async def injected_messages(config: RunnableConfig | None) -> list[HumanMessage]:
    """The messages injected into the running task, to add to the model's input (empty outside goldfive)."""
    bound = _binding(config)
    if bound is None:
        return []
    return [HumanMessage(text) for text in await read_injected(bound.session, bound.task_id)]


async def goldfive_pre_model_hook(state: Any, config: RunnableConfig) -> dict[str, Any]:
    """``create_react_agent(..., pre_model_hook=goldfive_pre_model_hook)``: before each model
    call, the injected messages join the thread's messages (so later calls see them too)."""
    return {"messages": await injected_messages(config)}


def ask_first(*tool_names: str) -> Any:
    """A ``ToolNode(tools, awrap_tool_call=ask_first("delete_file"))`` wrapper: a call to a named
    tool interrupts with LangGraph's human-in-the-loop request and runs, runs with edited
    arguments, or returns the person's denial to the model, as the resume value says."""
    names = frozenset(tool_names)

    async def wrapper(request: Any, execute: Any) -> Any:
        call = request.tool_call
        if call["name"] not in names:
            return await execute(request)
        answer = interrupt(
            {
                "action_request": {"action": call["name"], "args": dict(call["args"])},
                "config": {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": False},
                "description": f"Run {call['name']}?",
                "tool_call_id": call["id"],
            }
        )
        kind = answer.get("type") if isinstance(answer, dict) else None
        if kind == "accept":
            return await execute(request)
        if kind == "edit" and isinstance(answer.get("args"), dict) and isinstance(answer["args"].get("args"), dict):
            edited = answer["args"]["args"]
            result = await execute(request.override(tool_call={**call, "args": edited}))
            if isinstance(result, ToolMessage) and isinstance(result.content, str):
                note = f"\n(A person changed the arguments before approving; it ran with {to_text(edited)}.)"
                result = result.model_copy(update={"content": result.content + note})
            return result
        text = answer.get("args") if isinstance(answer, dict) else None
        denial = text if isinstance(text, str) and text else f"The call to {call['name']} was not approved; it did not run."
        return ToolMessage(content=denial, tool_call_id=call["id"], name=call["name"], status="error")

    return wrapper


# -- the adapter ------------------------------------------------------------------------------


class _Thread:
    """The run's thread: its id and whether a task is streaming on it."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.busy = False
        #: How many times a cancel left it mid-turn (the run moves on to a fresh thread).
        self.generation = 0
        #: The thread ids whose deletion at the run's end is arranged.
        self.registered: set[str] = set()

    @property
    def current(self) -> str:
        return self.thread_id if not self.generation else f"{self.thread_id}-{self.generation}"


class LangGraphAdapter:
    """An AgentAdapter running a compiled LangGraph graph (state with a ``messages`` key)."""

    def __init__(self, graph: Any, *, memory: bool = True, name: str = "") -> None:
        if not (hasattr(graph, "astream") and hasattr(graph, "aget_state") and hasattr(graph, "copy")):
            raise TypeError(f"LangGraphAdapter takes a compiled LangGraph graph (graph.compile()), got {type(graph).__name__}")
        self.user_graph = graph
        #: True: the run's tasks share one thread (the model remembers earlier tasks); False:
        #: each task starts from an empty thread.
        self.memory = memory
        self._saver: InMemorySaver | None = None
        if getattr(graph, "checkpointer", None) in (None, False):
            self._saver = InMemorySaver()
            graph = graph.copy({"checkpointer": self._saver})
        self.graph = graph
        self.name = name or str(getattr(graph, "name", "") or "") or "langgraph"
        if self.name == "LangGraph":  # the default name of an unnamed graph
            self.name = "langgraph"
        self._threads: weakref.WeakKeyDictionary[RunContext, _Thread] = weakref.WeakKeyDictionary()

    @property
    def available_agents(self) -> list[str]:
        return [self.name]

    def _run_thread(self, ctx: RunContext, session: Session) -> _Thread:
        thread = self._threads.get(ctx)
        if thread is None:
            thread = _Thread(f"goldfive-{session.run_id}-{id(ctx):x}")
            self._threads[ctx] = thread
        return thread

    async def invoke(self, task: Task, session: Session) -> InvocationResult:
        ctx = context_of(session)
        thread = self._run_thread(ctx, session)
        if self.memory and not thread.busy:
            thread_id, own = thread.current, False
            if self._saver is not None and thread_id not in thread.registered:
                thread.registered.add(thread_id)
                weakref.finalize(ctx, self._saver.delete_thread, thread_id)
        else:  # no memory, or another task of the run is streaming on its thread right now
            thread_id, own = f"{thread.thread_id}-{task.id}-{uuid.uuid4().hex[:8]}", True
        if not own:
            thread.busy = True
        try:
            return await _TaskRun(self.graph, ctx, session, task, thread_id).run()
        except asyncio.CancelledError:
            # The thread stopped mid-turn (a model call, or tool calls waiting for a person)
            # and would resume there; the run's next task starts a fresh thread instead.
            if not own:
                thread.generation += 1
            raise
        finally:
            if not own:
                thread.busy = False
            elif self._saver is not None:
                self._saver.delete_thread(thread_id)


class _TaskRun:
    """One task: stream the graph, answer its interrupts, resume, until it ends."""

    def __init__(self, graph: Any, ctx: RunContext, session: Session, task: Task, thread_id: str) -> None:
        self.graph, self.ctx, self.session, self.task = graph, ctx, session, task
        self.config: RunnableConfig = {
            "configurable": {"thread_id": thread_id, CONFIG_KEY: _Binding(session, task.id)},
        }
        self.calls: dict[str, dict[str, Any]] = {}  # tool call id -> its arguments
        self.rejected: set[str] = set()
        self.final_text = ""
        self.reported = ""
        #: The graph stopped at a static breakpoint (``interrupt_before/after``), not an interrupt().
        self.breakpoint = False

    async def run(self) -> InvocationResult:
        first: Any = {"messages": [HumanMessage(task_input(self.session, self.task)), *await self._injected()]}
        next_input: Any = first
        while True:
            interrupts = await self._drain(next_input)
            if self._status().is_terminal:
                return self._reported_result()
            if not interrupts and self.breakpoint:
                return InvocationResult(
                    self.task.id,
                    stop_reason="interrupted",
                    error="the graph stopped at a static breakpoint (interrupt_before/interrupt_after), which goldfive cannot "
                    "answer; compile it without them and ask with interrupt() (goldfive.adapters.langgraph.ask_first)",
                )
            if not interrupts:
                return InvocationResult(self.task.id, text=self.final_text, stop_reason="stop")
            unknown = [i for i in interrupts if _request_of(i.value) is None]
            if unknown:
                value = to_text(unknown[0].value)[:200]
                return InvocationResult(
                    self.task.id, stop_reason="interrupted", error=f"the graph interrupted with a request goldfive cannot answer: {value}"
                )
            answers = await self._decide(interrupts)
            next_input = Command(resume=answers)

    async def _injected(self) -> list[HumanMessage]:
        return [HumanMessage(text) for text in await read_injected(self.session, self.task.id)]

    async def _drain(self, graph_input: Any) -> list[Interrupt]:
        """Stream one graph invocation; the interrupts it stopped on."""
        interrupts: list[Interrupt] = []
        async with aclosing(self.graph.astream(graph_input, self.config, stream_mode="updates")) as stream:
            async for chunk in stream:
                if not isinstance(chunk, dict):
                    continue
                for node, update in chunk.items():
                    if node == "__interrupt__":
                        interrupts.extend(i for i in update if isinstance(i, Interrupt))
                        self.breakpoint = self.breakpoint or not update
                    elif not node.startswith("__"):
                        await self._record(update)
                if self._status().is_terminal:
                    break  # the model reported the task done or failed: the turn is over
        return interrupts

    async def _record(self, update: Any) -> None:
        for part in update if isinstance(update, list) else [update]:
            messages = part.get("messages") if isinstance(part, dict) else None
            if isinstance(messages, BaseMessage):
                messages = [messages]
            for m in messages or []:
                if isinstance(m, AIMessage):
                    await self._model_turn(m)
                elif isinstance(m, ToolMessage):
                    await self._tool_call(m)

    async def _model_turn(self, m: AIMessage) -> None:
        text = _text(m)
        for call in m.tool_calls:
            self.calls[str(call.get("id") or "")] = dict(call.get("args") or {})
        names = [str(c.get("name", "")) for c in m.tool_calls]
        if not names:
            self.final_text = text
        await self._report_usage(m)
        await record_model_turn(self.ctx, task_id=self.task.id, framework=FRAMEWORK, text=text, tool_calls=names)

    async def _report_usage(self, m: AIMessage) -> None:
        """LangChain's ``usage_metadata``: input_tokens (cache reads included,
        input_token_details.cache_read) and output_tokens; the model from response_metadata."""
        meta = m.usage_metadata
        if not meta:
            return
        inp, out = int(meta.get("input_tokens") or 0), int(meta.get("output_tokens") or 0)
        if not (inp or out):
            return
        details = meta.get("input_token_details") or {}
        cached = int(details.get("cache_read") or 0)
        rm = m.response_metadata or {}
        model = str(rm.get("model_name") or rm.get("model") or "")
        usage = ModelUsage(model=model, input_tokens=inp, output_tokens=out, cached_tokens=min(cached, inp), source=USAGE_SOURCE,
                           response_id=str(m.id or ""))  # fmt: skip
        await report_usage(usage, session=self.session, task_id=self.task.id)

    async def _tool_call(self, m: ToolMessage) -> None:
        call_id = str(m.tool_call_id)
        outcome = "rejected" if call_id in self.rejected else ("error" if m.status == "error" else "ok")
        name = str(m.name or "")
        if name in ("report_task_completed", "report_task_failed") and outcome == "ok":
            args = self.calls.get(call_id, {})
            self.reported = str(args.get("result") or args.get("reason") or "")
        await record_tool_call(
            self.ctx,
            task_id=self.task.id,
            framework=FRAMEWORK,
            tool_name=name,
            args=self.calls.get(call_id),
            result=m.content,
            outcome=outcome,
            call_id=call_id,
        )

    async def _decide(self, interrupts: Sequence[Interrupt]) -> dict[str, Any]:
        """Ask about every interrupted call at once (each its own approval); the resume map."""

        async def one(i: Interrupt) -> tuple[str, Any]:
            request = _request_of(i.value)
            assert request is not None
            name, args, call_id = request
            about = i.value[0] if isinstance(i.value, list) else i.value
            prompt = str(about.get("description") or "") if isinstance(about, dict) else ""
            decision = await ask_tool_approval(
                self.ctx, task_id=self.task.id, tool_name=name, args=args, call_id=call_id or i.id, prompt=prompt
            )
            if not decision.approved and call_id:
                self.rejected.add(call_id)
            return i.id, _response(decision, name, i.value)

        async with asyncio.TaskGroup() as group:
            asks = [group.create_task(one(i)) for i in interrupts]
        return dict(a.result() for a in asks)

    def _status(self) -> TaskStatus:
        plan = self.session.plan
        if plan is not None and plan.has_task(self.task.id):
            return plan.task(self.task.id).status
        return self.task.status

    def _reported_result(self) -> InvocationResult:
        status = self._status()
        if status == TaskStatus.COMPLETED:
            return InvocationResult(self.task.id, text=self.reported or self.final_text, stop_reason="task_completed")
        return InvocationResult(self.task.id, stop_reason=f"task_{status.lower()}", error=self.reported or f"task {status.lower()}")


def _request_of(value: Any) -> tuple[str, dict[str, Any], str] | None:
    """(tool name, arguments, tool call id) of a human-in-the-loop interrupt, else None."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, dict):
        return None
    action = value.get("action_request")
    if not isinstance(action, dict) or not isinstance(action.get("action"), str):
        return None
    args = action.get("args")
    return action["action"], dict(args) if isinstance(args, dict) else {}, str(value.get("tool_call_id") or "")


def _response(decision: ToolDecision, name: str, value: Any) -> Any:
    """The HumanResponse for ``decision`` (a list of one when the request was a list of one)."""
    if decision.approved and decision.arguments is not None:
        answer: dict[str, Any] = {"type": "edit", "args": {"action": name, "args": decision.arguments}}
    elif decision.approved:
        answer = {"type": "accept", "args": None}
    else:
        answer = {"type": "response", "args": decision.denial_for_model(name)}
    return [answer] if isinstance(value, list) else answer


def _text(m: AIMessage) -> str:
    content = m.content
    if isinstance(content, str):
        return content
    parts: Iterable[Any] = content
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in parts if isinstance(p, str | dict))
