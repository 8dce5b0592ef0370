"""The rules a run made, read back from its events (``RecordedRules``).

A live run answers the ``approval_rules`` verb from its desk; a run that has ended answers
nothing. Its rules are still worth reading (which calls a rule approved), and its events hold
them: every APPROVE with ``always`` and every ``approval_rules`` add or remove, each acked
SUCCESS. ``RecordedRules`` folds those (as the run did, in order) into the listing the verb
returns, so the same rules screen reads either.

What events cannot tell: the rules a run was started with (``RuntimeConfig.approval_rules``)
and the machine's saved rules made elsewhere; the listing says it is from the run's events.
"""

from __future__ import annotations

import json
import re
from typing import Any

from goldfive import conv
from goldfive.approvals.rules import Rule, RuleBook, matchers_from
from goldfive.controls.payloads import ApprovalRules, Approve, decode_payload
from goldfive.errors import GoldfiveError
from goldfive.pb.goldfive.v1 import control_pb2
from goldfive.pb.goldfive.v1 import events_pb2 as pb

__all__ = ["RecordedRules"]

#: The id an ``approval_rules`` add's ack names: "added R3: ...".
_ADDED = re.compile(r"^added ([A-Z]+\d+):")


class RecordedRules:
    """Feed it a run's events in order (``apply``); ``listing()`` is what ``approval_rules``
    ``{"op": "list"}`` would have answered at that point, as JSON."""

    def __init__(self) -> None:
        self._books = {"run": RuleBook("run"), "machine": RuleBook("machine")}
        #: Rule-making controls received, by control id, until their ack.
        self._pending: dict[str, tuple[str, Any, str]] = {}
        #: Approval target -> the tool it asks about (an "always" rule is for that tool).
        self._tools: dict[str, str] = {}

    def apply(self, ev: pb.Event) -> None:
        kind = ev.WhichOneof("payload")
        if kind == "approval_requested":
            p = ev.approval_requested
            if p.kind == "tool" and p.tool_name:
                self._tools[p.target_id] = p.tool_name
        elif kind == "control_received":
            self._received(ev.control_received)
        elif kind == "control_acked":
            ack = ev.control_acked.ack
            pending = self._pending.pop(ack.control_id, None)
            if pending is not None and ack.result == control_pb2.CONTROL_ACK_RESULT_SUCCESS:
                self._applied(*pending, ack.detail, ev.emitted_at.ToMilliseconds())

    def _received(self, p: pb.ControlReceived) -> None:
        try:
            msg = conv.from_pb_control_event(p.control)
            payload = decode_payload(msg.kind, msg.payload)
        except GoldfiveError:  # malformed: the run refused it too
            return
        if isinstance(payload, Approve) and payload.always is not None:
            self._pending[msg.id] = ("always", payload, p.author or payload.author)
        elif isinstance(payload, ApprovalRules) and payload.op in ("add", "remove"):
            self._pending[msg.id] = (payload.op, payload, p.author or payload.author)

    def _applied(self, what: str, payload: Any, author: str, detail: str, at_ms: int) -> None:
        if what == "remove":
            for book in self._books.values():
                if book.remove(payload.rule_id) is not None:
                    return
            return
        try:
            if what == "always":
                tool = self._tools.get(payload.target_id, "")
                if not tool:
                    return  # a task approval: the run refused to make a rule of it
                rule = Rule(tool, matchers_from(payload.always.match), author=author, made_at_ms=at_ms, scope=payload.always.scope)
                rule_id = ""
            else:
                rule = Rule.from_dict({**(payload.rule or {}), "id": "", "author": author, "made_at_ms": at_ms})
                found = _ADDED.match(detail)
                rule_id = found.group(1) if found else ""
            into = self._books.get(rule.scope)
            if into is None:
                return
            if rule_id:
                try:
                    into.add(Rule(rule.tool, dict(rule.matchers), rule_id, rule.author, rule.made_at_ms, rule.scope))
                    return
                except ValueError:
                    pass  # an id taken here (rules the run started with are not in its events)
            into.add(rule)
        except (ValueError, TypeError):  # what the run accepted but this reading cannot
            return

    def rules(self) -> list[Rule]:
        return self._books["run"].rules() + self._books["machine"].rules()

    def listing(self) -> str:
        """``{"rules": [...], "never_auto": [], "recorded": true}``: the verb's listing."""
        return json.dumps({"rules": [r.to_dict() for r in self.rules()], "never_auto": [], "recorded": True}, sort_keys=True)

