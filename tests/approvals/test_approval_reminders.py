"""Reminders and escalation of an undecided approval (issue 26, section 5): the run announces
it again after the reminder interval and escalates it after the longer one, always before its
timeout policy acts; both are events of the run and both show in the ledger."""

from __future__ import annotations

from typing import Any

import pytest

from goldfive.approvals import ApprovalPolicy, ApprovalReminders, OnTimeout, format_entry, ledger_of
from goldfive.control import AckResult, ControlKind
from goldfive.event_format import format_event
from goldfive.run import RuntimeConfig
from goldfive.view import RunState
from tests.runtime_kit import executor  # noqa: F401
from tests.approvals.test_approvals_decisions import _deploy_harness


def test_reminders_come_every_interval_until_the_escalation() -> None:
    plan = ApprovalReminders(remind_after_s=60, escalate_after_s=200).schedule(ApprovalPolicy())
    assert plan == [(60, "remind"), (120, "remind"), (180, "remind"), (200, "escalate:interval")]


def test_the_escalation_comes_before_a_deadline_that_would_act_first() -> None:
    reject_at_100 = ApprovalPolicy(OnTimeout.REJECT, timeout_s=100)  # warns at 80
    plan = ApprovalReminders(remind_after_s=30, escalate_after_s=600).schedule(reject_at_100)
    assert plan == [(30, "remind"), (60, "remind"), (80, "escalate:deadline")]
    assert ApprovalReminders(escalate_after_s=50).schedule(reject_at_100) == [(50, "escalate:interval")]
    # a deadline that only warns (policy "wait") does not move anything
    assert ApprovalReminders(escalate_after_s=50).schedule(ApprovalPolicy(timeout_s=10)) == [(50, "escalate:interval")]


def test_reminder_settings_that_cannot_work_are_refused() -> None:
    with pytest.raises(ValueError, match="must come after the first reminder"):
        ApprovalReminders(remind_after_s=60, escalate_after_s=30)
    with pytest.raises(ValueError, match="positive"):
        ApprovalReminders(remind_after_s=0)


async def test_an_undecided_approval_is_reminded_then_escalated_and_the_ledger_says_so(executor: Any) -> None:
    config = RuntimeConfig(approval_reminders=ApprovalReminders(remind_after_s=0.05, escalate_after_s=0.12))
    h, ran, _ = _deploy_harness(executor, config=config)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    escalated = await h.wait_event("approval_escalated")
    state = RunState()
    for ev in h.events:
        state.apply(ev)
    view = state.approvals[req.target_id]
    assert view.reminders == 2 and view.escalated_ms > 0  # at 0.05 and 0.10, escalated at 0.12
    assert escalated.approval_escalated.why == "interval" and escalated.approval_escalated.waited_ms >= 120
    ack = await h.control(ControlKind.APPROVE, target_id=req.target_id, author="bob", client="link")
    await h.finish()
    assert ack.result == AckResult.SUCCESS and ran == [{"service": "web", "replicas": 3}]
    kinds = [k for k in h.kinds() if k.startswith("approval_")]
    assert kinds[:5] == ["approval_requested", "approval_reminded", "approval_reminded", "approval_escalated", "approval_granted"]
    assert ": still undecided after 0.1s (reminder 1)" in format_event(next(e for e in h.events if e.WhichOneof("payload") == "approval_reminded"))
    (entry,) = ledger_of(h.events)
    assert (entry.author, entry.client, entry.reminders) == ("bob", "link", 2) and entry.escalated_at_ms > 0
    assert "reminded 2x, escalated at" in format_entry(entry)


async def test_a_decision_before_the_interval_leaves_no_reminder(executor: Any) -> None:
    config = RuntimeConfig(approval_reminders=ApprovalReminders(remind_after_s=30, escalate_after_s=60))
    h, ran, _ = _deploy_harness(executor, config=config)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.APPROVE, target_id=req.target_id)
    await h.finish()
    assert "approval_reminded" not in h.kinds() and "approval_escalated" not in h.kinds()
    (entry,) = ledger_of(h.events)
    assert entry.reminders == 0 and entry.escalated_at_ms == 0
