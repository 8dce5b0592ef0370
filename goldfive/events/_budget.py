"""Budget and usage: the limits as protobuf and back, a limit warned of, reached or changed,
and the usage a model call recorded."""

from __future__ import annotations

from goldfive.budget.model import LIMITS, Budget
from goldfive.clean import clean_text
from goldfive.events._envelope import _stamp
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.types import Session
from goldfive.usage.model import RecordedUsage


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
