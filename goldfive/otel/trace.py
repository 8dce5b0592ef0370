"""One run's event stream as an OpenTelemetry trace (the GenAI conventions, ``semconv.py``).

The run is an ``invoke_workflow`` span (``gen_ai.conversation.id`` and ``session.id`` = the
run id, so a resumed run's new trace groups with its first); making the plan and each replan a
``plan`` span; each task attempt an ``invoke_agent`` span; each tool call an ``execute_tool``
span under its task; each model call a ``chat`` span with its usage under its task or plan,
unless the framework's own instrumentation already made one (the usage names it): then the
parent links to that span and no second chat span is made. Approvals, controls and drifts are
span events. Spans carry the events' own times, so a replayed recording makes the same trace.

Prompts, arguments, results and evidence go out only with ``capture_content``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from goldfive import conv
from goldfive.otel import semconv as sc
from goldfive.pb.goldfive.v1 import events_pb2 as pb

__all__ = ["RunTrace"]

_TERMINAL_TASK = ("task_completed", "task_failed", "task_cancelled")


def _ns(ev: pb.Event) -> int:
    return ev.emitted_at.seconds * 1_000_000_000 + ev.emitted_at.nanos


@dataclass
class RunTrace:
    run_id: str
    tracer: trace.Tracer
    capture_content: bool = False
    root: Span | None = None
    plan: Span | None = None
    tasks: dict[str, Span] = field(default_factory=dict)
    #: Each task's last span, also once ended: a step recorded after the task's end (the
    #: tool call that completed it) still belongs under it.
    last_task: dict[str, Span] = field(default_factory=dict)
    #: Tool call id -> when its approval was asked (the execute_tool span starts there).
    asked_ns: dict[str, int] = field(default_factory=dict)
    linked: set[str] = field(default_factory=set)
    last_ns: int = 0
    ended: bool = False

    # -- the stream ------------------------------------------------------------------------
    def handle(self, ev: pb.Event) -> None:
        if self.ended:
            return
        kind = ev.WhichOneof("payload") or ""
        ns = _ns(ev)
        self.last_ns = max(self.last_ns, ns)
        if self.root is None:
            self._start(ev, kind, ns)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, getattr(ev, kind), ns)

    def _start(self, ev: pb.Event, kind: str, ns: int) -> None:
        attrs: dict[str, Any] = {
            sc.OPENINFERENCE_KIND: "CHAIN",
            sc.OPERATION: sc.OP_WORKFLOW,
            sc.WORKFLOW_NAME: "goldfive",
            sc.CONVERSATION_ID: self.run_id,
            sc.SESSION_ID: self.run_id,
            "goldfive.run.id": self.run_id,
        }
        if kind == "run_resumed":
            attrs["goldfive.run.resumed"] = True
        elif kind != "run_started":
            attrs["goldfive.run.joined_at_sequence"] = ev.sequence  # a hub that met the run mid-way
        if kind == "run_started" and self.capture_content and ev.run_started.user_input:
            attrs[sc.INPUT_MESSAGES] = _messages("user", ev.run_started.user_input)
        self.root = self.tracer.start_span("invoke_workflow goldfive", kind=SpanKind.INTERNAL, attributes=attrs, start_time=ns)
        self.plan = self._child(self.root, "plan", _plan_attrs(), ns) if kind == "run_started" else None

    def end(self, ns: int | None = None, error: str = "") -> None:
        """End every open span (the run ended, or this process stops watching it)."""
        if self.ended:
            return
        at = ns or self.last_ns
        for span in self.tasks.values():
            span.end(end_time=at)
        self.tasks.clear()
        if self.plan is not None:
            self.plan.end(end_time=at)
            self.plan = None
        if self.root is not None:
            if error:
                self.root.set_status(Status(StatusCode.ERROR, error[:200]))
                self.root.set_attribute(sc.ERROR_TYPE, "run_aborted")
            self.root.end(end_time=at)
        self.ended = True

    # -- helpers ---------------------------------------------------------------------------
    def _child(self, parent: Span, name: str, attrs: dict[str, Any], ns: int, kind: SpanKind = SpanKind.INTERNAL) -> Span:
        ctx = trace.set_span_in_context(parent)
        attrs.setdefault(sc.CONVERSATION_ID, self.run_id)
        attrs.setdefault(sc.SESSION_ID, self.run_id)
        return self.tracer.start_span(name, context=ctx, kind=kind, attributes=attrs, start_time=ns)

    def _where(self, task_id: str) -> Span | None:
        return self.tasks.get(task_id) or self.root

    def _plan_span(self, ns: int) -> Span:
        if self.plan is None:
            assert self.root is not None
            self.plan = self._child(self.root, "plan", {**_plan_attrs(), "goldfive.plan.replan": True}, ns)
        return self.plan

    # -- run and plan ----------------------------------------------------------------------
    def _run_completed(self, p: pb.RunCompleted, ns: int) -> None:
        if self.root is not None and self.capture_content and p.outcome_summary:
            self.root.set_attribute(sc.OUTPUT_MESSAGES, _messages("assistant", p.outcome_summary))
        self.end(ns)

    def _run_aborted(self, p: pb.RunAborted, ns: int) -> None:
        self.end(ns, error=p.reason or "aborted")

    def _run_resumed(self, p: pb.RunResumed, ns: int) -> None:
        assert self.root is not None
        self.root.add_event("goldfive.run.resumed", {"goldfive.resume_count": p.resume_count, "goldfive.detail": p.detail[:300]}, ns)

    def _planned(self, p: pb.PlanSubmitted | pb.PlanRevised, ns: int) -> None:
        span = self._plan_span(ns)
        plan = p.plan
        span.set_attribute("goldfive.plan.revision", plan.revision_index)
        span.set_attribute("goldfive.plan.tasks", len(plan.tasks))
        if plan.revision_reason:
            span.set_attribute("goldfive.plan.reason", plan.revision_reason[:300])
        span.end(end_time=ns)
        self.plan = None

    # -- tasks -----------------------------------------------------------------------------
    def _task_started(self, p: pb.TaskStarted, ns: int) -> None:
        assert self.root is not None
        old = self.tasks.pop(p.task_id, None)
        if old is not None:
            old.end(end_time=ns)
        name = p.assignee_agent_id or p.task_id
        attrs: dict[str, Any] = {sc.OPERATION: sc.OP_AGENT, sc.AGENT_NAME: name, "goldfive.task.id": p.task_id, sc.OPENINFERENCE_KIND: "AGENT"}
        self.tasks[p.task_id] = self.last_task[p.task_id] = self._child(self.root, f"invoke_agent {name}", attrs, ns)

    def _task_ended(self, p: Any, ns: int) -> None:
        span = self.tasks.pop(p.task_id, None)
        if span is None:
            return
        if isinstance(p, pb.TaskCompleted):
            if self.capture_content and p.result_summary:
                span.set_attribute(sc.OUTPUT_MESSAGES, _messages("assistant", p.result_summary))
        else:
            reason = p.reason
            span.set_status(Status(StatusCode.ERROR, reason[:200]))
            span.set_attribute(sc.ERROR_TYPE, "task_failed" if isinstance(p, pb.TaskFailed) else "task_cancelled")
        span.end(end_time=ns)

    def _agent_step(self, p: pb.AgentStep, ns: int) -> None:
        parent = self.last_task.get(p.task_id)
        if parent is None or p.step != "tool_call":
            return
        attrs: dict[str, Any] = {sc.OPERATION: sc.OP_TOOL, sc.TOOL_NAME: p.tool_name, sc.TOOL_TYPE: "function", sc.OPENINFERENCE_KIND: "TOOL"}
        if p.call_id:
            attrs[sc.TOOL_CALL_ID] = p.call_id
        if p.framework:
            attrs["goldfive.framework"] = p.framework
        if self.capture_content:
            attrs[sc.TOOL_ARGUMENTS] = p.args_json
            attrs[sc.TOOL_RESULT] = p.text[:4000]
        start = ns - p.duration_ms * 1_000_000
        if p.call_id:
            start = min(start, self.asked_ns.pop(p.call_id, start))
        span = self._child(parent, f"execute_tool {p.tool_name}", attrs, start)
        if p.outcome and p.outcome != "ok":
            span.set_status(Status(StatusCode.ERROR, p.outcome))
            span.set_attribute(sc.ERROR_TYPE, p.outcome)
        span.end(end_time=ns)

    def _usage(self, p: pb.UsageRecorded, ns: int) -> None:
        if p.purpose in ("plan", "goals", "replan") or not p.task_id:
            parent = self._plan_span(ns - p.duration_ms * 1_000_000) if p.purpose in ("plan", "goals", "replan") else self.root
        else:
            parent = self._where(p.task_id)
        if parent is None:
            return
        attrs: dict[str, Any] = {
            sc.OPERATION: sc.OP_CHAT,
            sc.REQUEST_MODEL: p.model,
            sc.RESPONSE_MODEL: p.model,
            sc.INPUT_TOKENS: p.input_tokens,
            sc.OUTPUT_TOKENS: p.output_tokens,
            "goldfive.usage.source": p.source,
            # what Phoenix (OpenInference) reads for a model call and its tokens
            sc.OPENINFERENCE_KIND: "LLM",
            "llm.model_name": p.model,
            "llm.token_count.prompt": p.input_tokens,
            "llm.token_count.completion": p.output_tokens,
            "llm.token_count.total": p.input_tokens + p.output_tokens,
        }
        if p.cached_tokens:
            attrs[sc.CACHE_READ_TOKENS] = p.cached_tokens
        if p.HasField("cost_usd"):
            attrs["goldfive.usage.cost_usd"] = p.cost_usd
            attrs["goldfive.usage.cost_source"] = p.cost_source
        provider = sc.provider_of(p.model)
        if provider:
            attrs[sc.PROVIDER] = provider
        if p.response_id:
            attrs[sc.RESPONSE_ID] = p.response_id
        if p.otel_trace_id and p.otel_span_id:  # the framework made the chat span: link, never twice
            ctx = _span_context(p.otel_trace_id, p.otel_span_id)
            if ctx is not None and p.otel_span_id not in self.linked:
                self.linked.add(p.otel_span_id)
                parent.add_link(ctx, {"goldfive.link": "framework chat span", **{k: v for k, v in attrs.items() if k.startswith("gen_ai.usage")}})
            return
        start = ns - p.duration_ms * 1_000_000
        self._child(parent, f"chat {p.model}", attrs, start, SpanKind.CLIENT).end(end_time=ns)

    # -- span events: drifts, controls, approvals ----------------------------------------------
    def _drift(self, p: pb.DriftDetected, ns: int) -> None:
        span = self._where(p.current_task_id)
        if span is None:
            return
        attrs: dict[str, Any] = {
            "goldfive.drift.id": p.id,
            "goldfive.drift.kind": str(conv.drift_kind_from_pb(p.kind)),
            "goldfive.drift.severity": str(conv.drift_severity_from_pb(p.severity)),
            "goldfive.drift.detail": p.detail[:500],
            "goldfive.drift.evidence_count": len(p.evidence),
        }
        if self.capture_content and p.evidence:
            attrs["goldfive.drift.evidence"] = [f"{e.tool_name}({e.args_json})" if e.what == "tool_call" else e.text for e in p.evidence]
        span.add_event("goldfive.drift", attrs, ns)

    def _control_received(self, p: pb.ControlReceived, ns: int) -> None:
        if self.root is None:
            return
        attrs: dict[str, Any] = {"goldfive.control.id": p.control.id, "goldfive.control.kind": p.kind, "goldfive.control.author": p.author}
        client = _client_of(p)
        if client:
            attrs["goldfive.control.client"] = client
        self.root.add_event("goldfive.control", attrs, ns)

    def _control_acked(self, p: pb.ControlAcked, ns: int) -> None:
        if self.root is None:
            return
        result = {1: "SUCCESS", 2: "FAILURE", 3: "UNSUPPORTED"}.get(p.ack.result, "UNSPECIFIED")
        attrs = {"goldfive.control.id": p.ack.control_id, "goldfive.control.kind": p.kind, "goldfive.control.outcome": result,
                 "goldfive.control.detail": p.ack.detail[:300]}  # fmt: skip
        self.root.add_event("goldfive.control.ack", attrs, ns)

    def _approval_requested(self, p: pb.ApprovalRequested, ns: int) -> None:
        self.asked_ns[p.target_id] = ns
        span = self._where(p.task_id)
        if span is None:
            return
        attrs: dict[str, Any] = {"goldfive.approval.target": p.target_id, "goldfive.approval.kind": p.kind, "goldfive.approval.tool": p.tool_name,
                                 "goldfive.approval.on_timeout": p.on_timeout}  # fmt: skip
        if self.capture_content:
            attrs["goldfive.approval.prompt"] = p.prompt
            attrs["goldfive.approval.arguments"] = p.args_json
        span.add_event("goldfive.approval.requested", attrs, ns)

    def _approval_decided(self, p: pb.ApprovalDecided, ns: int) -> None:
        span = self._where(p.task_id)
        if span is None:
            return
        attrs: dict[str, Any] = {
            "goldfive.approval.target": p.target_id,
            "goldfive.approval.kind": p.kind,
            "goldfive.approval.tool": p.tool_name,
            "goldfive.approval.outcome": p.outcome,
            "goldfive.approval.author": p.author,
            "goldfive.approval.client": p.client,
            "goldfive.approval.edited": p.outcome == "EDITED_APPROVED",
            "goldfive.approval.timed_out": p.outcome == "TIMED_OUT",
        }
        if p.rule_id:
            attrs["goldfive.approval.rule"] = p.rule_id
        if p.control_id:
            attrs["goldfive.control.id"] = p.control_id
        if self.capture_content:
            attrs["goldfive.approval.reason"] = p.reason
            if p.ran_args_json:
                attrs["goldfive.approval.ran_arguments"] = p.ran_args_json
        span.add_event("goldfive.approval", attrs, ns)


def _plan_attrs() -> dict[str, Any]:
    return {sc.OPERATION: sc.OP_PLAN, sc.OPENINFERENCE_KIND: "CHAIN"}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], ensure_ascii=False)


def _client_of(p: pb.ControlReceived) -> str:
    try:
        return str(conv.from_pb_control_event(p.control).payload.get("client", "") or "")
    except Exception:  # a malformed payload: the event still says kind and author
        return ""


def _span_context(trace_id: str, span_id: str) -> SpanContext | None:
    try:
        ctx = SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    except ValueError:
        return None
    return ctx if ctx.is_valid else None


_HANDLERS: dict[str, Any] = {
    "run_completed": RunTrace._run_completed,
    "run_aborted": RunTrace._run_aborted,
    "run_resumed": RunTrace._run_resumed,
    "plan_submitted": RunTrace._planned,
    "plan_revised": RunTrace._planned,
    "task_started": RunTrace._task_started,
    "task_completed": RunTrace._task_ended,
    "task_failed": RunTrace._task_ended,
    "task_cancelled": RunTrace._task_ended,
    "agent_step": RunTrace._agent_step,
    "usage_recorded": RunTrace._usage,
    "drift_detected": RunTrace._drift,
    "control_received": RunTrace._control_received,
    "control_acked": RunTrace._control_acked,
    "approval_requested": RunTrace._approval_requested,
    "approval_decided": RunTrace._approval_decided,
}
