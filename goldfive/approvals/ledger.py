"""The approvals ledger: every decision on an approval, read back from the event stream.

The ledger is not a separate store: each decision is an ``approval_decided`` event in the
run's recording, so it survives restarts and replays with the rest of the run."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from enum import StrEnum
from typing import Any

from goldfive.clean import json_encoder
from goldfive.pb.goldfive.v1 import events_pb2 as pb


class Outcome(StrEnum):
    APPROVED = "APPROVED"
    EDITED_APPROVED = "EDITED_APPROVED"
    REJECTED = "REJECTED"
    APPROVED_BY_RULE = "APPROVED_BY_RULE"
    TIMED_OUT = "TIMED_OUT"
    CANCELLED = "CANCELLED"
    #: A question answered with ANSWER (the answer is the entry's reason).
    ANSWERED = "ANSWERED"
    #: The run's reviewer decided (author and client "reviewer"; its reason is the entry's),
    #: no person overruling it within its grace (docs/approvals.md#a-reviewer).
    APPROVED_BY_REVIEWER = "APPROVED_BY_REVIEWER"
    REJECTED_BY_REVIEWER = "REJECTED_BY_REVIEWER"


_BY_A_PERSON = frozenset({Outcome.APPROVED, Outcome.EDITED_APPROVED, Outcome.REJECTED, Outcome.ANSWERED})

#: Who decided when no person did.
BY_RULE = "rule"
BY_GOLDFIVE = "goldfive"


@dataclass(frozen=True)
class LedgerEntry:
    run_id: str
    sequence: int
    decided_at_ms: int
    target_id: str
    outcome: str
    author: str
    client: str
    kind: str
    task_id: str
    tool_name: str
    requested_args: Any
    #: The arguments that ran; None when nothing ran.
    ran_args: Any
    reason: str
    rule_id: str = ""
    rule_author: str = ""
    rule_made_at_ms: int = 0
    control_id: str = ""
    #: What the hub that stored it checked (ApprovalDecided.hub_check): "routed", "reported",
    #: or "" when no hub stored it.
    hub_check: str = ""
    #: Reminders announced while it waited, and when it was escalated (0: never).
    reminders: int = 0
    escalated_at_ms: int = 0
    #: The run's reviewer on it before it was decided ("approve", "reject", "ask"; "" not
    #: reviewed) and its reason (or what failed, when it could not decide).
    review: str = ""
    review_reason: str = ""

    @property
    def edited(self) -> bool:
        return self.outcome == Outcome.EDITED_APPROVED

    @property
    def unverified(self) -> bool:
        """A person's decision the hub that stored it did not route: the runner says so,
        nothing the hub saw confirms it (a decision in the runner's own terminal, or forged)."""
        return self.hub_check == "reported" and self.outcome in _BY_A_PERSON

    @classmethod
    def from_event(cls, ev: pb.Event) -> LedgerEntry:
        p = ev.approval_decided
        return cls(
            run_id=ev.run_id,
            sequence=ev.sequence,
            decided_at_ms=ev.emitted_at.ToMilliseconds(),
            target_id=p.target_id,
            outcome=p.outcome,
            author=p.author,
            client=p.client,
            kind=p.kind,
            task_id=p.task_id,
            tool_name=p.tool_name,
            requested_args=_json(p.requested_args_json),
            ran_args=_json(p.ran_args_json),
            reason=p.reason,
            rule_id=p.rule_id,
            rule_author=p.rule_author,
            rule_made_at_ms=p.rule_made_at_ms,
            control_id=p.control_id,
            hub_check=p.hub_check,
        )

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _json(text: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # damaged in the recording: shown as it is, not lost


def ledger_of(events: Iterable[pb.Event]) -> list[LedgerEntry]:
    """The ledger entries in ``events``, in order, each with the reminders and the escalation
    its approval had before it was decided."""
    out = []
    reminded: dict[str, int] = {}
    escalated: dict[str, int] = {}
    reviewed: dict[str, tuple[str, str]] = {}
    for ev in events:
        kind = ev.WhichOneof("payload")
        if kind == "approval_reminded":
            reminded[ev.approval_reminded.target_id] = ev.approval_reminded.reminder
        elif kind == "approval_escalated":
            escalated[ev.approval_escalated.target_id] = ev.emitted_at.ToMilliseconds()
        elif kind == "approval_reviewed":
            r = ev.approval_reviewed
            reviewed[r.target_id] = (r.decision, r.reason or (f"could not decide: {r.error}" if r.error else ""))
        elif kind == "approval_decided":
            entry = LedgerEntry.from_event(ev)
            target = entry.target_id
            if target in reminded or target in escalated:
                entry = replace(entry, reminders=reminded.pop(target, 0), escalated_at_ms=escalated.pop(target, 0))
            if target in reviewed:
                decision, why = reviewed.pop(target)
                entry = replace(entry, review=decision, review_reason=why)
            out.append(entry)
    return out


#: ``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))``, made once.
_compact = json_encoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def when_text(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def format_entry(e: LedgerEntry, *, sep: str = "  ") -> str:
    """One line: when, outcome, what, who and through which client, then the arguments
    (``sep="\n    "`` puts the reason and the arguments on lines of their own)."""
    what = e.tool_name or ("question" if e.kind == "question" else e.target_id)
    who = e.author or "?"
    if e.client:
        who += f" via {e.client}"
    line = f"{when_text(e.decided_at_ms)}  {e.outcome:<16} {what} ({e.target_id})"
    if e.outcome == Outcome.APPROVED_BY_RULE:
        line += f"  {rule_text(e.rule_id, e.rule_author, e.rule_made_at_ms)}"
    else:
        line += f"  by {who}"
    if e.reminders or e.escalated_at_ms:
        waited = [f"reminded {e.reminders}x"] if e.reminders else []
        if e.escalated_at_ms:
            waited.append(f"escalated at {when_text(e.escalated_at_ms)}")
        line += f" ({', '.join(waited)})"
    if e.review and e.author != "reviewer":  # a person decided what the reviewer asked about, or overruled it
        said = "asked a person" if e.review == "ask" else f"said {e.review}"
        line += f"{sep}reviewer {said}: {e.review_reason}"
    if e.unverified:
        line += " [unverified: reported by the runner, not routed by the hub]"
    if e.reason and e.outcome == Outcome.ANSWERED:
        line += f"{sep}answer: {e.reason}"
    elif e.reason and e.outcome != Outcome.APPROVED_BY_RULE:
        line += f"{sep}reason: {e.reason}"
    if e.edited:
        line += f"{sep}asked {_compact(e.requested_args)} -> ran {_compact(e.ran_args)}"
    elif e.ran_args is not None:
        line += f"{sep}ran {_compact(e.ran_args)}"
    elif e.requested_args is not None:
        line += f"{sep}asked {_compact(e.requested_args)} (did not run)"
    return line


def rule_text(rule_id: str, author: str, made_at_ms: int) -> str:
    made = f" at {when_text(made_at_ms)}" if made_at_ms else ""
    return f"approved by rule {rule_id} (made by {author or '?'}{made})"
