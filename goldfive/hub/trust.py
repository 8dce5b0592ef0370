"""What a hub lets a credential do with a run, and what it believes of what a runner reports.

The rules (docs/protocol.md#what-a-runner-is-trusted-with):

- A run belongs to the credential that registered it. Only that credential reconnects it; an
  operator may take it over only by asking to (``RunnerHello.take_over``). A run the hub started
  itself (hosted in its process) takes no runner at all; a run it placed on a cluster only the
  credential its actors were given.
- A decision in a run's ledger (``approval_decided``) is believed only when the hub itself
  routed the deciding control to that run, with the same author, kind and target: the hub
  stamps ``hub_check`` "routed" on it. Anything else is stamped "reported" (made in the
  runner's own process, by a rule or a timeout, or claimed without the hub's knowledge),
  whatever the runner wrote there.

Everything here decides from the hub's registry (goldfive.store.registry), never from events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import grpc

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote.auth import OPERATOR
from goldfive.store.registry import CONNECTED, HOOKED, HOSTED, PLACED, PUSHED, Registration, RoutedControl

__all__ = ["ANONYMOUS", "REPORTED", "ROUTED", "Refusal", "connect_refusal", "hook_refusal", "stamp_decisions", "writer_label"]

#: ApprovalDecided.hub_check values.
ROUTED = "routed"
REPORTED = "reported"
#: The writer of a run on a hub without tokens.
ANONYMOUS = "anonymous"

#: The control kind that makes each outcome a person's decision.
_DECIDED_BY = {"APPROVED": "APPROVE", "EDITED_APPROVED": "APPROVE", "REJECTED": "REJECT", "ANSWERED": "ANSWER"}


@dataclass(frozen=True)
class Refusal:
    code: grpc.StatusCode
    detail: str


def _credential(name: str, role: str) -> str:
    return f"{'runner ' if role != OPERATOR else 'operator '}token {name!r}" if name else "this connection"


def connect_refusal(reg: Registration, who: str, role: str, take_over: bool) -> Refusal | None:
    """Why the caller (token ``who`` of ``role``) may not connect as ``reg``'s run, or None."""
    run = reg.run_id
    if reg.origin == HOSTED:
        return Refusal(grpc.StatusCode.FAILED_PRECONDITION, f"run {run} is hosted by this hub; a runner cannot connect as it")
    if reg.origin == HOOKED:
        return Refusal(grpc.StatusCode.FAILED_PRECONDITION, f"run {run} is an agent session the hub writes from its hooks; a runner cannot connect as it")
    if reg.owner == who:
        return None
    if reg.origin in (CONNECTED, PUSHED) and role == OPERATOR and take_over:
        return None  # an operator may take a run over, and must say so
    owner = f"token {reg.owner!r}" if reg.owner else "a connection without a token"
    if reg.origin == PLACED:
        why = f"run {run} was placed by this hub on its cluster; only its actors ({owner}) connect as it"
    elif role == OPERATOR:
        why = f"run {run} belongs to {owner}; an operator takes it over only by asking to (take_over in the hello)"
    else:
        why = f"run {run} belongs to {owner}; {_credential(who, role)} may not connect as it"
    return Refusal(grpc.StatusCode.PERMISSION_DENIED, why)


def writer_label(who: str, role: str) -> str:
    """How the hub's registry names the credential that writes a run's events."""
    return f"{role}:{who}" if who else ANONYMOUS


def stamp_decisions(events: Sequence[Event], routed: Mapping[str, RoutedControl]) -> int:
    """Set ``hub_check`` on every ``approval_decided`` of ``events`` (replacing what the runner
    wrote): ROUTED when ``routed`` (the controls this hub sent to the run) holds its deciding
    control with the same author, kind and target, REPORTED otherwise. Returns how many
    decisions claim a person's decision that the hub did not route (for its log)."""
    unverified = 0
    for ev in events:
        if ev.WhichOneof("payload") != "approval_decided":
            continue
        d = ev.approval_decided
        sent = routed.get(d.control_id) if d.control_id else None
        wanted = _DECIDED_BY.get(d.outcome)
        if sent is not None and wanted == sent.kind and sent.author == d.author and sent.target_id == d.target_id:
            d.hub_check = ROUTED
        else:
            d.hub_check = REPORTED
            if wanted is not None and d.author:
                unverified += 1
    return unverified


def hook_refusal(reg: Registration, who: str, role: str) -> Refusal | None:
    """Why the caller may not report hook events into ``reg``'s run, or None: only into a
    session the hub writes from hooks, and only the credential that first reported it."""
    if reg.origin != HOOKED:
        return Refusal(grpc.StatusCode.FAILED_PRECONDITION, f"run {reg.run_id} is not an agent session the hub writes from its hooks")
    if reg.owner != who:
        owner = f"token {reg.owner!r}" if reg.owner else "a connection without a token"
        return Refusal(grpc.StatusCode.PERMISSION_DENIED, f"run {reg.run_id} belongs to {owner}; {_credential(who, role)} may not report into it")
    return None
