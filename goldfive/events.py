"""Typed factories for the proto event stream.

Every factory takes the Session first, builds its payload, then stamps the envelope
(event_id, run_id, sequence, session_id, emitted_at) and returns a ``goldfive.v1.Event``.
``event.WhichOneof("payload")`` names the kind. Sequences come from
``session.next_sequence()``: gap-free from 0 per run, because a sequence is taken only once
the event was built (a payload that fails to build consumes none).

Text that arrives from agents, tools and people goes through ``clean_text`` first, so a string
protobuf cannot encode (a lone surrogate) is repaired rather than failing the event.
"""

from __future__ import annotations

from dataclasses import replace
from time import time_ns
from typing import Any, Iterable

from goldfive import conv
from goldfive.compat import fill_v1_approval, fill_v1_fields
from goldfive.clean import (
    clean_ack,
    clean_control,
    clean_goal,
    clean_map,
    json_text,
    clean_plan,
    clean_task,
    clean_text,
    encodable,
    text_replacements,  # re-exported: events.text_replacements() is how a caller reads the count
)
from goldfive.control import ControlAck, ControlKind, ControlMessage, kind_name
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.pb.goldfive.v1 import types_pb2
from goldfive.steering import SteeringNote, note_to_pb
from goldfive.types import DriftEvent, Goal, Plan, Session, TaskStatus, _wall_ms
from goldfive.budget.model import LIMITS, Budget
from goldfive.usage.model import RecordedUsage

Event = pb.Event

# google.protobuf.Timestamp's valid range (0001-01-01 .. 9999-12-31), in milliseconds.
_MIN_MS = -62_135_596_800_000
_MAX_MS = 253_402_300_799_999


# -- envelope ----------------------------------------------------------------------------


def _stamp(session: Session, ev: pb.Event, wall_ms: int | None = None) -> pb.Event:
    """Fill the envelope of a built event. The sequence is taken last, after everything that
    can fail, so an event that fails to build leaves no gap in the stream.

    Two events per task go through here: the usual case (a plain Session on the wall clock)
    reads the clock, the counter and the id suffix directly instead of through three methods;
    anything else (an injected clock, a subclass) goes through them. ``wall_ms``: the wall
    clock read by the caller (``task_event``), for a session on the wall clock only."""
    clock = session.clock
    if clock is _wall_ms:
        # a wall clock reading is inside a Timestamp's range
        ms = time_ns() // 1_000_000 if wall_ms is None else wall_ms
    else:
        ms = clock()
        if not _MIN_MS <= ms <= _MAX_MS:
            raise ValueError(f"clock reading {ms} ms is outside the range of a protobuf Timestamp")
    ts = ev.emitted_at
    ts.seconds = ms // 1000
    ts.nanos = ms % 1000 * 1_000_000
    ev.run_id = run_id = session.run_id
    ev.session_id = session.session_id
    if type(session) is Session:
        ev.sequence = seq = next(session._counter)
        ev.event_id = f"{run_id}:{seq}:{session._id_suffix}"
    else:
        ev.sequence = seq = session.next_sequence()
        ev.event_id = session.event_id(seq)
    return ev


def kind_of(event: pb.Event) -> str:
    """The payload kind of an event (``run_started``, ``task_completed``, ...)."""
    return event.WhichOneof("payload") or ""


# -- run lifecycle -------------------------------------------------------------------


def run_started(session: Session, *, goal_summary: str, user_input: str = "", launch_json: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.run_started
    p.goal_summary = clean_text(goal_summary)
    p.user_input = clean_text(user_input)
    p.launch_json = clean_text(launch_json)
    return fill_v1_fields(_stamp(session, ev))


def run_resumed(
    session: Session,
    *,
    resumed_after_sequence: int,
    resume_count: int,
    interrupted_task_ids: Iterable[str] = (),
    pending_approval_ids: Iterable[str] = (),
    paused: bool = False,
    undelivered_message_ids: Iterable[str] = (),
    unreadable_rows: int = 0,
    detail: str = "",
) -> pb.Event:
    ev = pb.Event()
    p = ev.run_resumed
    p.resumed_after_sequence = resumed_after_sequence
    p.resume_count = resume_count
    p.interrupted_task_ids.extend(clean_text(t) for t in interrupted_task_ids)
    p.pending_approval_ids.extend(clean_text(a) for a in pending_approval_ids)
    p.paused = paused
    p.undelivered_message_ids.extend(clean_text(m) for m in undelivered_message_ids)
    p.unreadable_rows = unreadable_rows
    p.detail = clean_text(detail)
    return _stamp(session, ev)


def goal_derived(session: Session, goals: Iterable[Goal]) -> pb.Event:
    ev = pb.Event()
    ev.goal_derived.goals.extend(encodable(conv.to_pb_goal, g, clean_goal) for g in goals)
    return _stamp(session, ev)


def _fill_plan(target: types_pb2.Plan, plan: Plan) -> None:
    """``conv.to_pb_plan`` built in the event itself (``encodable`` in place: a plan with text
    protobuf cannot encode is built again from its cleaned copy)."""
    target.SetInParent()
    try:
        conv.fill_pb_plan(target, plan)
    except UnicodeEncodeError:
        target.Clear()
        target.SetInParent()
        conv.fill_pb_plan(target, clean_plan(plan))


def plan_submitted(session: Session, plan: Plan) -> pb.Event:
    ev = pb.Event()
    _fill_plan(ev.plan_submitted.plan, plan)
    return _stamp(session, ev)


def plan_revised(session: Session, old: Plan | None, new: Plan, *, drift_id: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.plan_revised
    _fill_plan(p.plan, new)
    p.diff.CopyFrom(
        encodable(
            lambda plans: plan_diff(*plans),
            (old, new),
            lambda plans: (plans[0] and clean_plan(plans[0]), clean_plan(plans[1])),
        )
    )
    p.drift_id = clean_text(drift_id)
    return fill_v1_fields(_stamp(session, ev))


def run_completed(session: Session, outcome_summary: str = "") -> pb.Event:
    ev = pb.Event()
    ev.run_completed.outcome_summary = clean_text(outcome_summary)
    return _stamp(session, ev)


def run_aborted(session: Session, reason: str) -> pb.Event:
    ev = pb.Event()
    ev.run_aborted.reason = clean_text(reason)
    return _stamp(session, ev)


# -- tasks ---------------------------------------------------------------------------


def task_started(session: Session, task_id: str, assignee_agent_id: str = "") -> pb.Event:
    return task_event(session, True, task_id, assignee_agent_id)


def task_event(session: Session, started: bool, task_id: str, text: str, wall_ms: int | None = None) -> pb.Event:
    """The two events of every task: ``task_started`` (``text``: the assignee) when
    ``started``, else ``task_completed`` (``text``: the result summary). ``wall_ms``: the wall
    clock already read by the caller, which tells the watchdog the same time (``_stamp``)."""
    ev = pb.Event()
    # Two events per task: ASCII text (nearly all) is passed here without a call of clean_text.
    task_id = task_id if task_id.__class__ is str and task_id.isascii() else clean_text(task_id)
    if started:
        p = ev.task_started
        p.task_id = task_id
        if text:
            p.assignee_agent_id = clean_text(text)
    else:
        q = ev.task_completed
        q.task_id = task_id
        if text != "":  # anything but a string (None) fails the build, before a sequence is drawn
            q.result_summary = text if text.__class__ is str and text.isascii() else clean_text(text)
    return _stamp(session, ev, wall_ms)


def task_progress(session: Session, task_id: str, *, detail: str = "", fraction: float | None = None) -> pb.Event:
    """``fraction`` in 0..1 when the agent reported one; None (or negative): none reported,
    and the event has no fraction."""
    ev = pb.Event()
    p = ev.task_progress
    p.task_id = clean_text(task_id)
    p.detail = clean_text(detail)
    if fraction is not None and fraction >= 0:
        p.fraction = fraction
    return _stamp(session, ev)


def task_completed(session: Session, task_id: str, result_summary: str = "") -> pb.Event:
    return task_event(session, False, task_id, result_summary)


def task_failed(session: Session, task_id: str, reason: str, *, recoverable: bool = False) -> pb.Event:
    ev = pb.Event()
    p = ev.task_failed
    p.task_id = clean_text(task_id)
    p.reason = clean_text(reason)
    p.recoverable = recoverable
    return _stamp(session, ev)


def task_blocked(session: Session, task_id: str, blocker: str) -> pb.Event:
    ev = pb.Event()
    p = ev.task_blocked
    p.task_id = clean_text(task_id)
    p.blocker = clean_text(blocker)
    return _stamp(session, ev)


def task_cancelled(session: Session, task_id: str, reason: str) -> pb.Event:
    ev = pb.Event()
    p = ev.task_cancelled
    p.task_id = clean_text(task_id)
    p.reason = clean_text(reason)
    return _stamp(session, ev)


def task_transitioned(
    session: Session, task_id: str, from_status: TaskStatus, to_status: TaskStatus, reason: str = ""
) -> pb.Event:
    ev = pb.Event()
    t = ev.task_transitioned
    t.task_id = clean_text(task_id)
    t.from_status = conv.task_status_to_pb(from_status)
    t.to_status = conv.task_status_to_pb(to_status)
    t.reason = clean_text(reason)
    return fill_v1_fields(_stamp(session, ev))


# -- drift and approvals ---------------------------------------------------------------

# The approval events (six per approved tool call with the tool's own step): an empty text
# field is left unset (proto3 reads it as ""), ASCII text (nearly all) is set without a call
# of clean_text, anything else goes through it (and a value that is not text still fails there).


#: conv's maps of a DriftKind and a DriftSeverity to their protobuf values.
_DRIFT_KINDS = conv._DRIFT_TO_PB
_SEVERITIES = conv._SEV_TO_PB


def drift_detected(session: Session, drift: DriftEvent) -> pb.Event:
    ev = pb.Event()
    d = ev.drift_detected
    # Every STATUS_QUERY makes one: ASCII text (nearly all) is set without a call of clean_text.
    value = drift.id
    d.id = value if value.__class__ is str and value.isascii() else clean_text(value)
    # A known kind and severity (nearly all) looked up here, the rest through conv's check.
    kind, severity = drift.kind, drift.severity
    d.kind = _DRIFT_KINDS[kind] if kind in _DRIFT_KINDS else conv.drift_kind_to_pb(kind)
    d.severity = _SEVERITIES[severity] if severity in _SEVERITIES else conv.drift_severity_to_pb(severity)
    value = drift.detail
    d.detail = value if value.__class__ is str and value.isascii() else clean_text(value)
    value = drift.task_id or session.current_task_id
    d.current_task_id = value if value.__class__ is str and value.isascii() else clean_text(value)
    value = drift.annotation_id
    if value != "":
        d.annotation_id = value if value.__class__ is str and value.isascii() else clean_text(value)
    for item in drift.evidence:
        e = d.evidence.add()
        e.at.FromMilliseconds(min(max(item.at_ms, _MIN_MS), _MAX_MS))
        e.what = clean_text(item.what)
        e.tool_name = clean_text(item.tool_name)
        e.call_id = clean_text(item.call_id)
        e.args_json = clean_text(item.args_json)
        e.text = clean_text(item.text)
        e.sequence = max(item.sequence, 0)
    return _stamp(session, ev)


def usage_recorded(session: Session, recorded: RecordedUsage) -> pb.Event:
    ev = pb.Event()
    p = ev.usage_recorded
    u = recorded.usage
    p.task_id = clean_text(recorded.task_id)
    p.purpose = str(recorded.purpose)
    p.model = clean_text(u.model)
    p.input_tokens = u.input_tokens
    p.output_tokens = u.output_tokens
    p.cached_tokens = u.cached_tokens
    if recorded.cost_usd is not None:
        p.cost_usd = recorded.cost_usd
    p.source = clean_text(u.source)
    p.cost_source = clean_text(recorded.cost_source)
    p.response_id = clean_text(u.response_id)
    p.duration_ms = u.duration_ms
    p.otel_trace_id = clean_text(u.otel_trace_id)
    p.otel_span_id = clean_text(u.otel_span_id)
    return _stamp(session, ev)


def approval_requested(
    session: Session,
    *,
    target_id: str,
    kind: str,
    prompt: str = "",
    task_id: str = "",
    tool_name: str = "",
    args: dict[str, Any] | None = None,
    timeout_ms: int = 0,
    metadata: dict[str, str] | None = None,
    on_timeout: str = "",
    retry_of: str = "",
    parameters: dict[str, Any] | None = None,
    under_review: bool = False,
    args_json: str | None = None,
    parameters_json: str | None = None,
) -> pb.Event:
    """``args_json`` / ``parameters_json``: ``json_text`` of ``args`` / ``parameters`` when the
    caller made it already (the request's arguments for its ledger entry too; a tool's schema
    once per turn), used instead of dumping them again."""
    ev = pb.Event()
    a = ev.approval_requested
    a.under_review = under_review
    if on_timeout != "":
        a.on_timeout = on_timeout if on_timeout.__class__ is str and on_timeout.isascii() else clean_text(on_timeout)
    if retry_of != "":
        a.retry_of = retry_of if retry_of.__class__ is str and retry_of.isascii() else clean_text(retry_of)
    if parameters_json is not None:
        if parameters_json != "":
            a.parameters_json = parameters_json if parameters_json.__class__ is str and parameters_json.isascii() else clean_text(parameters_json)
    elif parameters:
        a.parameters_json = json_text(parameters)
    if target_id != "":
        a.target_id = target_id if target_id.__class__ is str and target_id.isascii() else clean_text(target_id)
    if kind != "":
        a.kind = kind if kind.__class__ is str and kind.isascii() else clean_text(kind)
    if prompt != "":
        a.prompt = prompt if prompt.__class__ is str and prompt.isascii() else clean_text(prompt)
    if task_id != "":
        a.task_id = task_id if task_id.__class__ is str and task_id.isascii() else clean_text(task_id)
    if tool_name != "":
        a.tool_name = tool_name if tool_name.__class__ is str and tool_name.isascii() else clean_text(tool_name)
    if args_json is not None:  # the caller's json_text(args), made once for the request and its ledger
        if args_json != "":
            a.args_json = args_json if args_json.__class__ is str and args_json.isascii() else clean_text(args_json)
    elif args is not None:
        a.args_json = json_text(args)
    a.timeout_ms = timeout_ms
    if metadata:
        a.metadata.update(clean_map(metadata))
    _stamp(session, ev)
    fill_v1_approval(a)
    return ev


def approval_granted(
    session: Session, target_id: str, detail: str = "", *, arguments: dict[str, Any] | None = None, rule_id: str = ""
) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_granted
    if target_id != "":
        p.target_id = target_id if target_id.__class__ is str and target_id.isascii() else clean_text(target_id)
    if detail != "":
        p.detail = detail if detail.__class__ is str and detail.isascii() else clean_text(detail)
    if arguments is not None:
        p.arguments_json = json_text(arguments)
    if rule_id != "":
        p.rule_id = rule_id if rule_id.__class__ is str and rule_id.isascii() else clean_text(rule_id)
    return _stamp(session, ev)


def approval_rejected(session: Session, target_id: str, detail: str = "", *, timed_out: bool = False) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_rejected
    if target_id != "":
        p.target_id = target_id if target_id.__class__ is str and target_id.isascii() else clean_text(target_id)
    if detail != "":
        p.detail = detail if detail.__class__ is str and detail.isascii() else clean_text(detail)
    p.timed_out = timed_out
    return _stamp(session, ev)


def approval_decided(
    session: Session,
    *,
    target_id: str,
    outcome: str,
    author: str = "",
    client: str = "",
    kind: str = "tool",
    task_id: str = "",
    tool_name: str = "",
    requested_args: dict[str, Any] | None = None,
    ran_args: dict[str, Any] | None = None,
    reason: str = "",
    rule_id: str = "",
    rule_author: str = "",
    rule_made_at_ms: int = 0,
    control_id: str = "",
    requested_args_json: str | None = None,
) -> pb.Event:
    """One decision on an approval, for the ledger: who, through which client, what ran.

    ``requested_args_json``: ``json_text(requested_args)`` when the caller made it already
    (the request's); ``ran_args`` that are the requested ones (the same object) reuse it."""
    ev = pb.Event()
    p = ev.approval_decided
    if target_id != "":
        p.target_id = target_id if target_id.__class__ is str and target_id.isascii() else clean_text(target_id)
    if outcome != "":
        p.outcome = outcome if outcome.__class__ is str and outcome.isascii() else clean_text(outcome)
    if author != "":
        p.author = author if author.__class__ is str and author.isascii() else clean_text(author)
    if client != "":
        p.client = client if client.__class__ is str and client.isascii() else clean_text(client)
    if kind != "":
        p.kind = kind if kind.__class__ is str and kind.isascii() else clean_text(kind)
    if task_id != "":
        p.task_id = task_id if task_id.__class__ is str and task_id.isascii() else clean_text(task_id)
    if tool_name != "":
        p.tool_name = tool_name if tool_name.__class__ is str and tool_name.isascii() else clean_text(tool_name)
    asked = None
    if requested_args_json is not None:
        p.requested_args_json = asked = clean_text(requested_args_json)
    elif requested_args is not None:
        p.requested_args_json = asked = json_text(requested_args)
    if ran_args is not None:
        p.ran_args_json = asked if asked is not None and ran_args is requested_args else json_text(ran_args)
    if reason != "":
        p.reason = reason if reason.__class__ is str and reason.isascii() else clean_text(reason)
    if rule_id != "":
        p.rule_id = rule_id if rule_id.__class__ is str and rule_id.isascii() else clean_text(rule_id)
    if rule_author != "":
        p.rule_author = rule_author if rule_author.__class__ is str and rule_author.isascii() else clean_text(rule_author)
    p.rule_made_at_ms = rule_made_at_ms
    if control_id != "":
        p.control_id = control_id if control_id.__class__ is str and control_id.isascii() else clean_text(control_id)
    return _stamp(session, ev)


def approval_expiring(session: Session, target_id: str, *, ms_left: int, on_timeout: str) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_expiring
    p.target_id = clean_text(target_id)
    p.ms_left = ms_left
    p.on_timeout = clean_text(on_timeout)
    return _stamp(session, ev)


def approval_reminded(session: Session, target_id: str, *, waited_ms: int, reminder: int) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_reminded
    p.target_id = clean_text(target_id)
    p.waited_ms = waited_ms
    p.reminder = reminder
    return _stamp(session, ev)


def question_asked(
    session: Session,
    *,
    target_id: str,
    prompt: str,
    task_id: str = "",
    options: tuple[str, ...] | list[str] = (),
    free_text: bool = True,
    timeout_ms: int = 0,
    on_timeout: str = "",
) -> pb.Event:
    ev = pb.Event()
    p = ev.question_asked
    p.target_id = clean_text(target_id)
    p.task_id = clean_text(task_id)
    p.prompt = clean_text(prompt)
    p.options.extend(clean_text(o) for o in options)
    p.free_text = free_text
    p.timeout_ms = timeout_ms
    p.on_timeout = clean_text(on_timeout)
    return _stamp(session, ev)


def question_answered(
    session: Session, target_id: str, *, outcome: str, text: str = "", option: str = "", author: str = "", client: str = ""
) -> pb.Event:
    ev = pb.Event()
    p = ev.question_answered
    p.target_id = clean_text(target_id)
    p.outcome = clean_text(outcome)
    p.text = clean_text(text)
    p.option = clean_text(option)
    p.author = clean_text(author)
    p.client = clean_text(client)
    return _stamp(session, ev)


def approval_escalated(session: Session, target_id: str, *, waited_ms: int, why: str) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_escalated
    p.target_id = clean_text(target_id)
    p.waited_ms = waited_ms
    p.why = clean_text(why)
    return _stamp(session, ev)


def approval_reviewed(
    session: Session, target_id: str, *, decision: str, reason: str, error: str = "", grace_ms: int = 0, model: str = ""
) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_reviewed
    p.target_id = clean_text(target_id)
    p.decision = clean_text(decision)
    p.reason = clean_text(reason)
    p.error = clean_text(error)
    p.grace_ms = grace_ms
    p.model = clean_text(model)
    return _stamp(session, ev)


# -- turns and injected messages ---------------------------------------------------------


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


def budget_limits(budget: Budget) -> pb.BudgetLimits:
    out = pb.BudgetLimits()
    for name, value in budget.items():
        setattr(out, name, value)
    return out


def budget_from_pb(p: pb.BudgetLimits) -> Budget:
    """The Budget a BudgetLimits holds (a recording's): limits that are not valid are dropped."""
    values = {name: getattr(p, name) for name in LIMITS if p.HasField(name) and getattr(p, name) > 0}
    return Budget(**values)


def budget_warning(session: Session, limit: str, used: float, allowed: float, detail: str) -> pb.Event:
    ev = pb.Event()
    p = ev.budget_warning
    p.limit, p.used, p.allowed, p.detail = limit, used, allowed, clean_text(detail)
    return _stamp(session, ev)


def budget_reached(session: Session, limit: str, used: float, allowed: float, detail: str, where: str, task_id: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.budget_reached
    p.limit, p.used, p.allowed, p.detail, p.where = limit, used, allowed, clean_text(detail), where
    p.task_id = clean_text(task_id)
    return _stamp(session, ev)


def budget_changed(session: Session, budget: Budget, author: str = "", control_id: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.budget_changed
    p.budget.CopyFrom(budget_limits(budget))
    p.author = clean_text(author)
    p.control_id = clean_text(control_id)
    p.detail = budget.describe()
    return _stamp(session, ev)


def recording_failed(session: Session, detail: str, failed_at_sequence: int) -> pb.Event:
    ev = pb.Event()
    p = ev.recording_failed
    p.detail = clean_text(detail)
    p.failed_at_sequence = max(failed_at_sequence, 0)
    return _stamp(session, ev)


# -- control audit trail ------------------------------------------------------------------

# kind_name() of each known kind, computed once: reading an enum member's value is slow.
_KIND_NAMES: dict[ControlKind | str, str] = {k: kind_name(k) for k in ControlKind}


def control_received(session: Session, msg: ControlMessage) -> pb.Event:
    ev = pb.Event()
    r = ev.control_received
    # Written into the event's own field (built once, not built and copied); text that
    # cannot be encoded is cleaned and the field written again.
    target = r.control
    try:
        conv.fill_pb_control_event(target, msg)
    except UnicodeEncodeError:
        target.Clear()
        conv.fill_pb_control_event(target, clean_control(msg))
    r.kind = _KIND_NAMES.get(msg.kind) or clean_text(kind_name(msg.kind))
    payload = msg.payload
    author = payload.get("author") if payload and isinstance(payload, dict) else None
    if author:
        r.author = clean_text(str(author))
    return _stamp(session, ev)


def control_acked(session: Session, ack: ControlAck, kind: str) -> pb.Event:
    ev = pb.Event()
    p = ev.control_acked
    target = p.ack
    try:
        conv.fill_pb_control_ack(target, ack)
    except UnicodeEncodeError:
        target.Clear()
        conv.fill_pb_control_ack(target, clean_ack(ack))
    p.kind = kind if kind.__class__ is str and kind.isascii() else clean_text(kind)
    return _stamp(session, ev)


# -- plan diff ----------------------------------------------------------------------------


def plan_diff(old: Plan | None, new: Plan) -> pb.PlanRevisionDiff:
    """Added, removed and modified task ids (title, description, assignee or status changed)
    and added / removed edges, in plan order."""
    old_tasks = {t.id: t for t in old.tasks} if old else {}
    new_ids = {t.id for t in new.tasks}
    diff = pb.PlanRevisionDiff()
    for t in new.tasks:
        prev = old_tasks.get(t.id)
        if prev is None:
            diff.added_task_ids.append(t.id)
        elif (prev.title, prev.description, prev.assignee_agent_id, prev.status) != (
            t.title,
            t.description,
            t.assignee_agent_id,
            t.status,
        ):
            diff.modified_task_ids.append(t.id)
    if old:
        diff.removed_task_ids.extend(t.id for t in old.tasks if t.id not in new_ids)
    old_edges = {(e.from_task_id, e.to_task_id) for e in old.edges} if old else set()
    new_edges = {(e.from_task_id, e.to_task_id) for e in new.edges}
    for e in new.edges:
        if (e.from_task_id, e.to_task_id) not in old_edges:
            diff.added_edges.append(types_pb2.TaskEdge(from_task_id=e.from_task_id, to_task_id=e.to_task_id))
    if old:
        for e in old.edges:
            if (e.from_task_id, e.to_task_id) not in new_edges:
                diff.removed_edges.append(types_pb2.TaskEdge(from_task_id=e.from_task_id, to_task_id=e.to_task_id))
    return diff


# -- steering that waits or sticks (goldfive.steering) -------------------------------------


def _note(target: pb.SteeringNote, note: SteeringNote) -> None:
    target.CopyFrom(note_to_pb(replace(note, text=clean_text(note.text), author=clean_text(note.author), client=clean_text(note.client))))


def steer_queued(session: Session, note: SteeringNote) -> pb.Event:
    """A STEER sent "after this task" waits in the queue as ``note``."""
    ev = pb.Event()
    _note(ev.steer_queued.note, note)
    return _stamp(session, ev)


def steer_queue_changed(
    session: Session, note_id: str, op: str, *, order: Iterable[str], text: str = "", author: str = "", control_id: str = ""
) -> pb.Event:
    """A queued note was edited, withdrawn, moved, held, released, delivered or made standing;
    ``order`` is the queue's ids after the change."""
    ev = pb.Event()
    p = ev.steer_queue_changed
    p.note_id = clean_text(note_id)
    p.op = clean_text(op)
    p.text = clean_text(text)
    p.author = clean_text(author)
    p.control_id = clean_text(control_id)
    p.order.extend(clean_text(i) for i in order)
    return _stamp(session, ev)


def guidance_added(session: Session, note: SteeringNote, *, made_from: str = "") -> pb.Event:
    """``note`` is standing guidance: every later task's input carries it until it is removed."""
    ev = pb.Event()
    _note(ev.guidance_added.note, note)
    ev.guidance_added.made_from = clean_text(made_from)
    return _stamp(session, ev)


def guidance_removed(session: Session, guidance_id: str, *, author: str = "", control_id: str = "") -> pb.Event:
    ev = pb.Event()
    p = ev.guidance_removed
    p.guidance_id = clean_text(guidance_id)
    p.author = clean_text(author)
    p.control_id = clean_text(control_id)
    return _stamp(session, ev)
