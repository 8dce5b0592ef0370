"""Typed factories for the proto event stream.

Every factory takes the Session first, builds its payload, then stamps the envelope
(event_id, run_id, sequence, session_id, emitted_at) and returns a ``goldfive.v1.Event``.
``event.WhichOneof("payload")`` names the kind. Sequences come from
``session.next_sequence()``: gap-free from 0 per run, because a sequence is taken only once
the event was built (a payload that fails to build consumes none).

Text that arrives from agents, tools and people goes through ``clean_text`` first, so a string
protobuf cannot encode (a lone surrogate) is repaired rather than failing the event.

This package is the public face; the factories live in private modules by concept (the
envelope, the run, tasks, drift, approvals, turns, budget, the control trail, steering) and
are the same objects here, so ``events.task_started`` costs no extra call.
"""

from __future__ import annotations

from goldfive.clean import (
    clean_text,
    text_replacements,  # re-exported: events.text_replacements() is how a caller reads the count
)
from goldfive.events._approvals import (
    approval_decided,
    approval_escalated,
    approval_expiring,
    approval_granted,
    approval_rejected,
    approval_reminded,
    approval_requested,
    approval_reviewed,
    question_answered,
    question_asked,
)
from goldfive.events._budget import (
    budget_changed,
    budget_from_pb,
    budget_limits,
    budget_reached,
    budget_warning,
    usage_recorded,
)
from goldfive.events._control import control_acked, control_received
from goldfive.events._drift import drift_detected
from goldfive.events._envelope import Event, kind_of
from goldfive.events._run import (
    goal_derived,
    plan_diff,
    plan_revised,
    plan_submitted,
    recording_failed,
    run_aborted,
    run_completed,
    run_resumed,
    run_started,
)
from goldfive.events._steering import guidance_added, guidance_removed, steer_queue_changed, steer_queued
from goldfive.events._tasks import (
    task_blocked,
    task_cancelled,
    task_completed,
    task_event,
    task_failed,
    task_progress,
    task_started,
    task_transitioned,
)
from goldfive.events._turns import (
    AGENT_STEPS,
    agent_step,
    conversation_ended,
    conversation_started,
    invocation_abandoned,
    message_delivered,
    message_parked,
    message_returned,
)

__all__ = [
    "AGENT_STEPS",
    "Event",
    "agent_step",
    "approval_decided",
    "approval_escalated",
    "approval_expiring",
    "approval_granted",
    "approval_rejected",
    "approval_reminded",
    "approval_requested",
    "approval_reviewed",
    "budget_changed",
    "budget_from_pb",
    "budget_limits",
    "budget_reached",
    "budget_warning",
    "clean_text",
    "control_acked",
    "control_received",
    "conversation_ended",
    "conversation_started",
    "drift_detected",
    "goal_derived",
    "guidance_added",
    "guidance_removed",
    "invocation_abandoned",
    "kind_of",
    "message_delivered",
    "message_parked",
    "message_returned",
    "plan_diff",
    "plan_revised",
    "plan_submitted",
    "question_answered",
    "question_asked",
    "recording_failed",
    "run_aborted",
    "run_completed",
    "run_resumed",
    "run_started",
    "steer_queue_changed",
    "steer_queued",
    "task_blocked",
    "task_cancelled",
    "task_completed",
    "task_event",
    "task_failed",
    "task_progress",
    "task_started",
    "task_transitioned",
    "text_replacements",
    "usage_recorded",
]
