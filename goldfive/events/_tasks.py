"""The events of a task: started, progress, completed, failed, blocked, cancelled, and its
status transitions."""

from __future__ import annotations

from goldfive import conv
from goldfive.clean import clean_text
from goldfive.compat import fill_v1_fields
from goldfive.events._envelope import _stamp
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.types import Session, TaskStatus


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
