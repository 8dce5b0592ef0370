"""LangGraphAdapter: a goldfive task is one run of a compiled LangGraph graph.

The graph is any ``CompiledStateGraph`` whose state has a ``messages`` key (a LangChain v1
``create_agent`` agent, a ``create_react_agent`` graph, or a user's ``StateGraph``). What the
adapter uses, all LangGraph's own public mechanisms:

- **One thread per goldfive run.** Every task of a run streams on the same ``thread_id``, so the
  graph's checkpointer keeps the conversation across the run's tasks. The thread's first task
  input carries the goals, the plan and the results; a later task's input only what changed
  since (``goldfive.adapters.task_prompt.Told``), so the thread does not grow by a plan a task. A graph compiled without a
  checkpointer is copied with an ``InMemorySaver`` (``Pregel.copy``; the user's object is not
  changed) whose thread is deleted when the run is gone. Tasks that run at the same time
  (parallel executor) cannot share a thread: a task that finds the run's thread busy runs on a
  thread of its own. ``LangGraphAdapter(graph, memory=False)`` gives every task a fresh thread.
- **Interrupts are answered by a person.** Each ``interrupt()`` the graph stops on is read by
  ``goldfive.adapters.langgraph.requests``: LangChain's ``HumanInTheLoopMiddleware`` (batched or
  per call), the Agent Inbox request of :func:`ask_first`, or any other value, which is a
  question. Each tool call becomes a goldfive tool approval under its tool call id (rules and
  the never-auto list apply first; the ledger records the decision), each question (a plain
  interrupt, a respond-only call) a goldfive question (docs/approvals.md#questions); all are asked at once, and the thread resumes with
  ``Command(resume={interrupt_id: answer})`` in the form the request expects.
- **The reporting tools and injected messages are part of the graph** when it is built with
  them (``goldfive.adapters.langgraph.tools``; ``GoldfiveMiddleware`` for ``create_agent``).
  A graph built without them still runs: injected messages then reach it only when a task
  starts or an interrupt resumes.
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
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, Interrupt

from goldfive.adapters.common import Answer, ToolDecision, ask_question, ask_tool_approval, record_model_turn, record_tool_call, task_input, to_text
from goldfive.adapters.langgraph.requests import Ask, Unanswerable, read_request
from goldfive.adapters.langgraph.tools import CONFIG_KEY, Binding
from goldfive.adapters.task_prompt import Told
from goldfive.usage import ModelUsage, report_usage
from goldfive.results import InvocationResult
from goldfive.run.context import RunContext
from goldfive.run.current_run import current, read_injected
from goldfive.types import Session, Task, TaskStatus

__all__ = ["FRAMEWORK", "LangGraphAdapter"]

FRAMEWORK = "langgraph"
#: The ``source`` of the usage this adapter records (the figures are LangChain's usage_metadata).
USAGE_SOURCE = "langchain"


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
        #: What the current thread was told of the run (a fresh thread starts untold).
        self.told = Told()
        self._told_generation = 0

    def told_now(self) -> Told:
        """What the thread of the current generation was told (a new one after a cancel)."""
        if self._told_generation != self.generation:
            self.told, self._told_generation = Told(), self.generation
        return self.told

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
        ctx = current()
        thread = self._run_thread(ctx, session)
        if self.memory and not thread.busy:
            thread_id, own, told = thread.current, False, thread.told_now()
            if self._saver is not None and thread_id not in thread.registered:
                thread.registered.add(thread_id)
                weakref.finalize(ctx, self._saver.delete_thread, thread_id)
        else:  # no memory, or another task of the run is streaming on its thread right now
            thread_id, own, told = f"{thread.thread_id}-{task.id}-{uuid.uuid4().hex[:8]}", True, None
        if not own:
            thread.busy = True
        try:
            return await _TaskRun(self.graph, ctx, session, task, thread_id, told).run()
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

    def __init__(self, graph: Any, ctx: RunContext, session: Session, task: Task, thread_id: str, told: Told | None = None) -> None:
        self.graph, self.ctx, self.session, self.task = graph, ctx, session, task
        #: What the thread was told before (None: a fresh thread, given the whole context).
        self.told = told
        self.config: RunnableConfig = {
            "configurable": {"thread_id": thread_id, CONFIG_KEY: Binding(session, task.id)},
        }
        self.calls: dict[str, dict[str, Any]] = {}  # tool call id -> its arguments (as they ran)
        #: The tool calls of the latest model answer (a batched request is matched to them).
        self.latest_calls: list[dict[str, Any]] = []
        self.turns_seen: set[str] = set()
        self.rejected: set[str] = set()
        self.final_text = ""
        self.reported = ""
        #: The graph stopped at a static breakpoint (``interrupt_before/after``), not an interrupt().
        self.breakpoint = False

    async def run(self) -> InvocationResult:
        # The input is in the thread from the stream's first step (a cancel moves the run to a
        # fresh thread, told from scratch).
        first: Any = {"messages": [HumanMessage(task_input(self.session, self.task, self.told)), *await self._injected()]}
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
                    "answer; compile it without them and ask with interrupt() (goldfive.adapters.langgraph.ask_first, or LangChain's HumanInTheLoopMiddleware)",
                )
            if not interrupts:
                return InvocationResult(self.task.id, text=self.final_text, stop_reason="stop")
            try:
                answers = await self._decide(interrupts)
            except Unanswerable as exc:
                return InvocationResult(self.task.id, stop_reason="interrupted", error=f"the graph cannot take the decision: {exc}")
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
        if m.id is not None:
            if m.id in self.turns_seen:
                # A middleware updated the answer (HumanInTheLoopMiddleware puts it back with the
                # calls still to run): the same model turn, recorded once.
                self.latest_calls = [dict(c) for c in m.tool_calls]
                return
            self.turns_seen.add(m.id)
        text = _text(m)
        for call in m.tool_calls:
            self.calls[str(call.get("id") or "")] = dict(call.get("args") or {})
        if m.tool_calls:
            self.latest_calls = [dict(c) for c in m.tool_calls]
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
        """Ask about everything the interrupts hold at once (one approval each); the resume map.
        Raises Unanswerable when a decision cannot be put in a request's form."""
        requests = [(i, read_request(i.value, i.response_schema, self.latest_calls)) for i in interrupts]
        async with asyncio.TaskGroup() as group:
            asked = [[group.create_task(self._ask(i, n, ask)) for n, ask in enumerate(r.asks)] for i, r in requests]
        return {i.id: r.answer([t.result() for t in tasks]) for (i, r), tasks in zip(requests, asked)}

    async def _ask(self, i: Interrupt, n: int, ask: Ask) -> ToolDecision | Answer:
        target = ask.call_id or (i.id if n == 0 else f"{i.id}-{n}")
        if ask.is_question:
            prompt = ask.prompt or f"{ask.tool_name} {to_text(ask.args)}"
            return await ask_question(self.ctx, task_id=self.task.id, question=prompt, target_id=target, options=ask.options)
        decision = await ask_tool_approval(
            self.ctx,
            task_id=self.task.id,
            tool_name=ask.tool_name,
            args=ask.args,
            call_id=target,
            prompt=ask.prompt,
            parameters=ask.parameters,
            editable=ask.editable,
        )
        if ask.call_id and not decision.approved:
            self.rejected.add(ask.call_id)
        elif ask.call_id and decision.arguments is not None:
            self.calls[ask.call_id] = decision.arguments
        return decision

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


def _text(m: AIMessage) -> str:
    content = m.content
    if isinstance(content, str):
        return content
    parts: Iterable[Any] = content
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in parts if isinstance(p, str | dict))
