"""The one place goldfive's dataclasses meet the generated protobuf messages.

Each ``to_pb_*`` has a ``from_pb_*`` partner; ``tests/test_conv.py`` round-trips every kind.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, TypeVar, cast

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from goldfive.clean import json_encoder
from goldfive.control import AckResult, AppliedAs, ControlAck, ControlKind, ControlMessage, kind_name
from goldfive.errors import ConversionError
from goldfive.pb.goldfive.v1 import control_pb2, events_pb2, types_pb2
from goldfive.types import DriftKind, DriftSeverity, Goal, Plan, Task, TaskEdge, TaskStatus
from goldfive.usage.model import UsageTotals

# -- enums -------------------------------------------------------------------------

_PyEnum = TypeVar("_PyEnum", bound=StrEnum)
_PbEnum = TypeVar("_PbEnum", bound=int)


def _enum_maps(
    py_enum: type[_PyEnum], pb_enum: type[_PbEnum], prefix: str
) -> tuple[dict[_PyEnum, _PbEnum], dict[int, _PyEnum]]:
    # A generated enum is a class only in the stubs (at runtime it is an EnumTypeWrapper), and
    # the stubs type its Value() as int although the numbers are that enum's values.
    wrapper = cast(EnumTypeWrapper, pb_enum)
    to_pb = {m: cast(_PbEnum, wrapper.Value(prefix + m.name)) for m in py_enum}
    return to_pb, {v: k for k, v in to_pb.items()}


_KIND_TO_PB, _KIND_FROM_PB = _enum_maps(ControlKind, control_pb2.ControlKind, "CONTROL_KIND_")
_ACK_TO_PB, _ACK_FROM_PB = _enum_maps(AckResult, control_pb2.ControlAckResult, "CONTROL_ACK_RESULT_")
_APPLIED_TO_PB, _APPLIED_FROM_PB = _enum_maps(AppliedAs, control_pb2.ControlAppliedAs, "CONTROL_APPLIED_AS_")
_STATUS_TO_PB, _STATUS_FROM_PB = _enum_maps(TaskStatus, types_pb2.TaskStatus, "TASK_STATUS_")
_DRIFT_TO_PB, _DRIFT_FROM_PB = _enum_maps(DriftKind, types_pb2.DriftKind, "DRIFT_KIND_")
_SEV_TO_PB, _SEV_FROM_PB = _enum_maps(DriftSeverity, types_pb2.DriftSeverity, "DRIFT_SEVERITY_")

# The *_from_pb converters take any int: a field decoded from a newer peer may hold a number
# this version's enum does not know, which they reject or map to "".


def task_status_to_pb(status: TaskStatus | str) -> types_pb2.TaskStatus:
    return _STATUS_TO_PB[TaskStatus(status)]


def task_status_from_pb(value: int) -> TaskStatus:
    try:
        return _STATUS_FROM_PB[value]
    except KeyError:
        raise ConversionError(f"unknown task status value {value}") from None


def drift_kind_to_pb(kind: DriftKind | str) -> types_pb2.DriftKind:
    if not kind:
        return types_pb2.DRIFT_KIND_UNSPECIFIED
    try:  # a StrEnum member and its text hash alike: either is found without a conversion
        return _DRIFT_TO_PB[kind]  # type: ignore[index]
    except KeyError:
        return _DRIFT_TO_PB[DriftKind(kind)]  # ValueError naming an unknown kind


def drift_kind_from_pb(value: int) -> DriftKind | str:
    return _DRIFT_FROM_PB.get(value, "")


def drift_severity_to_pb(sev: DriftSeverity | str) -> types_pb2.DriftSeverity:
    if not sev:
        return types_pb2.DRIFT_SEVERITY_UNSPECIFIED
    try:
        return _SEV_TO_PB[sev]  # type: ignore[index]
    except KeyError:
        return _SEV_TO_PB[DriftSeverity(sev)]  # ValueError naming an unknown severity


def drift_severity_from_pb(value: int) -> DriftSeverity | str:
    return _SEV_FROM_PB.get(value, "")


# -- control -------------------------------------------------------------------------

# Payload keys carried by a typed field, per kind; anything else travels in extra_json.
_TYPED_KEYS: dict[ControlKind, tuple[str, ...]] = {
    ControlKind.STEER: ("note", "suggested_action", "author", "annotation_id"),
    ControlKind.REWIND_TO: ("task_id",),
    ControlKind.APPROVE: ("target_id", "detail"),
    ControlKind.REJECT: ("target_id", "detail"),
    ControlKind.INJECT_MESSAGE: ("role", "text"),
    ControlKind.CANCEL: ("reason",),
    ControlKind.INTERCEPT_TRANSFER: ("enabled",),
}
#: ``_TYPED_KEYS`` as sets: a payload whose keys are all typed (an APPROVE's target_id, a
#: STEER's note) has no extra, found without a comprehension over it.
_TYPED_SETS: dict[ControlKind, frozenset[str]] = {kind: frozenset(keys) for kind, keys in _TYPED_KEYS.items()}
_ONEOF_FIELD = {
    ControlKind.STEER: ("steer", control_pb2.SteerPayload),
    ControlKind.REWIND_TO: ("rewind", control_pb2.RewindPayload),
    ControlKind.APPROVE: ("approve", control_pb2.ApprovePayload),
    ControlKind.REJECT: ("reject", control_pb2.RejectPayload),
    ControlKind.INJECT_MESSAGE: ("inject_message", control_pb2.InjectMessagePayload),
}


def _str_field(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key, "")
    return "" if value is None else str(value)


def to_pb_control_event(msg: ControlMessage) -> control_pb2.ControlEvent:
    ev = control_pb2.ControlEvent()
    fill_pb_control_event(ev, msg)
    return ev


# google.protobuf.Timestamp's valid range (0001-01-01 .. 9999-12-31), in milliseconds.
_MIN_MS = -62_135_596_800_000
_MAX_MS = 253_402_300_799_999


def _set_ms(ts: Any, ms: int, what: str) -> None:
    """``ts.FromMilliseconds(ms)`` without its two Python calls (every control and ack sets
    one); the same ValueError for a time a Timestamp cannot hold."""
    if not _MIN_MS <= ms <= _MAX_MS:
        raise ValueError(f"{what} {ms} ms is outside the range of a protobuf Timestamp")
    ts.seconds = ms // 1000
    ts.nanos = ms % 1000 * 1_000_000


#: ``json.dumps(value, ensure_ascii=False, sort_keys=True)``, its encoder made once.
_payload_json = json_encoder(ensure_ascii=False, sort_keys=True)


def fill_pb_control_event(ev: control_pb2.ControlEvent, msg: ControlMessage) -> None:
    """``to_pb_control_event`` written into ``ev`` (an empty message, e.g. an event's own
    field), so the event is built once, not built and copied."""
    ev.id = msg.id
    if msg.issued_at_ms:
        _set_ms(ev.issued_at, msg.issued_at_ms, "issued_at")
    payload = msg.payload
    if payload.__class__ is not dict:  # a malformed payload fails here as it always did (dict())
        payload = dict(payload or {})
    kind = msg.kind
    if isinstance(kind, ControlKind):
        ev.kind = _KIND_TO_PB[kind]
        if not payload and kind not in _ONEOF_FIELD:
            return  # PAUSE, RESUME, STATUS_QUERY: nothing more to write
        typed = _TYPED_KEYS.get(kind, ())
        if kind in _ONEOF_FIELD:
            # Written into the oneof's own message (marked present even when every field is
            # empty), not built apart and copied in.
            sub = getattr(ev, _ONEOF_FIELD[kind][0])
            sub.SetInParent()
            for k in typed:
                value = payload.get(k)
                if value is not None and value != "":
                    setattr(sub, k, value if value.__class__ is str else str(value))
            if kind is ControlKind.APPROVE and isinstance(payload.get("arguments"), dict):
                # Edited arguments have their own field (ApprovePayload.arguments_json).
                ev.approve.arguments_json = _payload_json(payload["arguments"])
                typed = (*typed, "arguments")
        elif kind is ControlKind.CANCEL:
            ev.cancel_reason = _str_field(payload, "reason")
        elif kind is ControlKind.INTERCEPT_TRANSFER and "enabled" in payload:
            ev.intercept_enabled = bool(payload["enabled"])
        if payload.keys() <= _TYPED_SETS.get(kind, frozenset()):
            return  # every key has its typed field (edited arguments are not in the set)
        extra = {k: v for k, v in payload.items() if k not in typed}
    else:
        ev.custom_kind = kind
        extra = payload
    if extra:
        try:
            ev.extra_json = _payload_json(extra)
        except (TypeError, ValueError) as exc:
            raise ConversionError(f"{kind_name(kind)} payload is not JSON-serialisable: {exc}") from exc


def _shown(text: str, limit: int = 64) -> str:
    """A client's string quoted in an error, clipped: an error must not grow with the input."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def from_pb_control_event(ev: control_pb2.ControlEvent) -> ControlMessage:
    if ev.kind == 0:
        if not ev.custom_kind:
            raise ConversionError(f"control {_shown(ev.id)} has no kind")
        kind: ControlKind | str = ev.custom_kind
    else:
        try:
            kind = _KIND_FROM_PB[ev.kind]
        except KeyError:
            raise ConversionError(f"control {_shown(ev.id)} has unknown kind value {ev.kind}") from None
    payload: dict[str, Any] = {}
    which = ev.WhichOneof("payload")
    if which is not None:
        sub = getattr(ev, which)
        payload.update({f.name: getattr(sub, f.name) for f in sub.DESCRIPTOR.fields})
        edited = payload.pop("arguments_json", "")
        if edited:
            try:
                payload["arguments"] = json.loads(edited)
            except ValueError as exc:
                raise ConversionError(f"control {_shown(ev.id)} has malformed arguments_json: {exc}") from exc
    elif kind in _ONEOF_FIELD:
        # A typed kind sent without its payload: expose the fields as empty strings. kind may
        # still be a custom_kind string equal to a known kind's value (ControlMessage normalises
        # it below); ControlKind(kind) is then that kind.
        payload.update({k: "" for k in _TYPED_KEYS[ControlKind(kind)]})
    if ev.cancel_reason:
        # goldfive v1 decodes a CANCEL without a reason as {}; proto3 cannot tell "" from unset.
        payload["reason"] = ev.cancel_reason
    if ev.HasField("intercept_enabled"):
        payload["enabled"] = ev.intercept_enabled
    if ev.extra_json:
        try:
            extra = json.loads(ev.extra_json)
        except ValueError as exc:
            raise ConversionError(f"control {_shown(ev.id)} has malformed extra_json: {exc}") from exc
        if not isinstance(extra, dict):
            raise ConversionError(f"control {_shown(ev.id)}: extra_json is not a JSON object")
        payload.update(extra)
    try:
        issued = ev.issued_at.ToMilliseconds() if ev.HasField("issued_at") else 0
    except ValueError:  # seconds / nanos outside what a Timestamp may hold
        raise ConversionError(f"control {_shown(ev.id)} has an issued_at that is not a valid time") from None
    return ControlMessage(kind=kind, id=ev.id, payload=payload, issued_at_ms=issued)


def to_pb_control_ack(ack: ControlAck) -> control_pb2.ControlAck:
    out = control_pb2.ControlAck()
    fill_pb_control_ack(out, ack)
    return out


def fill_pb_control_ack(out: control_pb2.ControlAck, ack: ControlAck) -> None:
    """``to_pb_control_ack`` written into ``out`` (an empty message, e.g. the ControlAcked
    event's own field), so the ack's protobuf is built once, not built and copied."""
    # StrEnum members hash and compare as their values: a plain "SUCCESS" finds its entry too.
    result = _ACK_TO_PB.get(ack.result)
    if result is None:
        result = _ACK_TO_PB[AckResult(ack.result)]  # ValueError naming a result that is none
    out.control_id = ack.control_id
    out.result = result
    out.detail = ack.detail
    if ack.acked_at_ms:
        _set_ms(out.acked_at, ack.acked_at_ms, "acked_at")
    if ack.applied_as is not None:
        applied = _APPLIED_TO_PB.get(ack.applied_as)
        out.applied_as = applied if applied is not None else _APPLIED_TO_PB[AppliedAs(ack.applied_as)]


def from_pb_control_ack(ack: control_pb2.ControlAck) -> ControlAck:
    try:
        result = _ACK_FROM_PB[ack.result]
    except KeyError:
        raise ConversionError(f"ack for {ack.control_id!r} has no result") from None
    return ControlAck(
        control_id=ack.control_id,
        result=result,
        detail=ack.detail,
        acked_at_ms=ack.acked_at.ToMilliseconds() if ack.HasField("acked_at") else 0,
        # Unset (an ack from before the field) or a value a newer peer added: not said.
        applied_as=_APPLIED_FROM_PB.get(ack.applied_as),
    )


# -- plans -------------------------------------------------------------------------


def to_pb_goal(goal: Goal) -> types_pb2.Goal:
    return types_pb2.Goal(id=goal.id, summary=goal.summary, metadata=dict(goal.metadata))


def from_pb_goal(goal: types_pb2.Goal) -> Goal:
    return Goal(id=goal.id, summary=goal.summary, metadata=dict(goal.metadata))


def to_pb_task(task: Task) -> types_pb2.Task:
    return types_pb2.Task(
        id=task.id,
        title=task.title,
        description=task.description,
        assignee_agent_id=task.assignee_agent_id,
        status=_STATUS_TO_PB[task.status],
        predicted_start_ms=task.predicted_start_ms,
        predicted_duration_ms=task.predicted_duration_ms,
    )


def from_pb_task(task: types_pb2.Task) -> Task:
    return Task(
        id=task.id,
        title=task.title,
        description=task.description,
        assignee_agent_id=task.assignee_agent_id,
        status=task_status_from_pb(task.status) if task.status else TaskStatus.PENDING,
        predicted_start_ms=task.predicted_start_ms,
        predicted_duration_ms=task.predicted_duration_ms,
    )


def to_pb_plan(plan: Plan) -> types_pb2.Plan:
    out = types_pb2.Plan()
    fill_pb_plan(out, plan)
    return out


def fill_pb_plan(out: types_pb2.Plan, plan: Plan) -> None:
    """``to_pb_plan`` into ``out`` (an empty message: an event's ``plan`` field, built where it
    is kept rather than built apart and copied, a second pass over every task)."""
    out.id = plan.id
    out.run_id = plan.run_id
    out.goal_ids.extend(plan.goal_ids)
    out.summary = plan.summary
    out.revision_reason = plan.revision_reason
    out.revision_kind = drift_kind_to_pb(plan.revision_kind)
    out.revision_severity = drift_severity_to_pb(plan.revision_severity)
    out.revision_index = plan.revision_index
    # Built in place: a standalone message per task costs its own arena (~1 KB each, 7x the
    # peak memory and twice the time of adding them to the plan's repeated field). Fields at
    # their default (most tasks have no description, assignee or prediction) are left unset:
    # the message is the same (proto3 does not tell an unset scalar from its default), and
    # each keyword is a lookup by name per task.
    add_task = out.tasks.add
    status_to_pb = _STATUS_TO_PB
    for t in plan.tasks:
        if t.description or t.assignee_agent_id or t.predicted_start_ms or t.predicted_duration_ms:
            add_task(
                id=t.id,
                title=t.title,
                description=t.description,
                assignee_agent_id=t.assignee_agent_id,
                status=status_to_pb[t.status],
                predicted_start_ms=t.predicted_start_ms,
                predicted_duration_ms=t.predicted_duration_ms,
            )
        else:
            add_task(id=t.id, title=t.title, status=status_to_pb[t.status])
    add_edge = out.edges.add
    for e in plan.edges:
        add_edge(from_task_id=e.from_task_id, to_task_id=e.to_task_id)


def from_pb_plan(plan: types_pb2.Plan) -> Plan:
    return Plan(
        tasks=[from_pb_task(t) for t in plan.tasks],
        edges=[TaskEdge(e.from_task_id, e.to_task_id) for e in plan.edges],
        id=plan.id,
        run_id=plan.run_id,
        goal_ids=list(plan.goal_ids),
        summary=plan.summary,
        revision_reason=plan.revision_reason,
        revision_kind=drift_kind_from_pb(plan.revision_kind),
        revision_severity=drift_severity_from_pb(plan.revision_severity),
        revision_index=plan.revision_index,
    )


# -- usage ---------------------------------------------------------------------------


def to_pb_usage_totals(totals: UsageTotals) -> events_pb2.UsageTotals:
    return events_pb2.UsageTotals(
        calls=totals.calls,
        input_tokens=totals.input_tokens,
        output_tokens=totals.output_tokens,
        cached_tokens=totals.cached_tokens,
        cost_usd=totals.cost_usd,
        unpriced_calls=totals.unpriced_calls,
    )


def from_pb_usage_totals(p: events_pb2.UsageTotals) -> UsageTotals:
    """A peer's figures, made consistent (cached never above input, no negative cost)."""
    return UsageTotals(
        calls=p.calls,
        input_tokens=p.input_tokens,
        output_tokens=p.output_tokens,
        cached_tokens=min(p.cached_tokens, p.input_tokens),
        cost_usd=max(0.0, p.cost_usd) if p.cost_usd == p.cost_usd else 0.0,
        unpriced_calls=min(p.unpriced_calls, p.calls),
    )
