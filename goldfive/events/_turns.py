"""Turns and injected messages: a lane's conversation, the steps inside a task's agent run,
messages parked, delivered or returned, an invocation abandoned."""

from __future__ import annotations

from typing import Any

from goldfive.clean import clean_text, json_text
from goldfive.compat import fill_v1_fields
from goldfive.events._envelope import _stamp
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.types import Session


def conversation_started(session: Session, lane: str, input_text: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.conversation_started
    p.lane = clean_text(lane)
    p.input = clean_text(input_text)
    return fill_v1_fields(_stamp(session, ev))


def conversation_ended(session: Session, lane: str, reason: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.conversation_ended
    p.lane = clean_text(lane)
    p.reason = clean_text(reason)
    return _stamp(session, ev)


#: The kinds of ``agent_step`` (AgentStep.step).
AGENT_STEPS = ("model_turn", "tool_call", "hook", "usage")


def agent_step(
    session: Session,
    *,
    task_id: str,
    step: str,
    framework: str,
    tool_name: str = "",
    call_id: str = "",
    args: dict[str, Any] | None = None,
    text: str = "",
    outcome: str = "",
    duration_ms: int = 0,
) -> pb.Event:
    """One step inside a task's agent run (framework adapters): ``model_turn`` (the model's
    text and the tools it called), ``tool_call`` (a tool ran, was refused or failed), ``hook``
    (a framework's lifecycle hook: ``tool_name`` names it, e.g. PreToolUse, SubagentStart,
    Notification; ``text`` says what it reported) or ``usage`` (what a framework run consumed:
    ``args`` holds its token counts and cost, ``text`` a summary)."""
    if step not in AGENT_STEPS:
        raise ValueError(f"agent_step step must be one of {', '.join(AGENT_STEPS)}, got {step!r}")
    ev = pb.Event()
    p = ev.agent_step
    # Every tool call an adapter records makes one: ASCII text (nearly all) is set without a
    # call of clean_text, and an empty field is left unset (proto3 reads it as "").
    if task_id != "":
        p.task_id = task_id if task_id.__class__ is str and task_id.isascii() else clean_text(task_id)
    p.step = step
    if framework != "":
        p.framework = framework if framework.__class__ is str and framework.isascii() else clean_text(framework)
    if tool_name != "":
        p.tool_name = tool_name if tool_name.__class__ is str and tool_name.isascii() else clean_text(tool_name)
    if call_id != "":
        p.call_id = call_id if call_id.__class__ is str and call_id.isascii() else clean_text(call_id)
    if args is not None:
        p.args_json = json_text(args)
    if text != "":
        p.text = text if text.__class__ is str and text.isascii() else clean_text(text)
    if outcome != "":
        p.outcome = outcome if outcome.__class__ is str and outcome.isascii() else clean_text(outcome)
    if duration_ms > 0:
        p.duration_ms = duration_ms
    return _stamp(session, ev)


def message_parked(
    session: Session, *, message_id: str, lane: str, role: str, text: str, control_id: str = ""
) -> pb.Event:
    ev = pb.Event()
    m = ev.message_parked
    m.message_id = clean_text(message_id)
    m.lane = clean_text(lane)
    m.role = clean_text(role)
    m.text = clean_text(text)
    m.control_id = clean_text(control_id)
    return _stamp(session, ev)


def message_delivered(session: Session, *, message_id: str, lane: str, via: str) -> pb.Event:
    ev = pb.Event()
    m = ev.message_delivered
    m.message_id = clean_text(message_id)
    m.lane = clean_text(lane)
    m.via = clean_text(via)
    return _stamp(session, ev)


def message_returned(session: Session, *, message_id: str, lane: str) -> pb.Event:
    ev = pb.Event()
    m = ev.message_returned
    m.message_id = clean_text(message_id)
    m.lane = clean_text(lane)
    return _stamp(session, ev)


def invocation_abandoned(session: Session, task_id: str, grace_s: float, reason: str) -> pb.Event:
    ev = pb.Event()
    a = ev.invocation_abandoned
    a.task_id = clean_text(task_id)
    a.grace_s = grace_s
    a.reason = clean_text(reason)
    return _stamp(session, ev)
