"""Rules made while approving ("always"), and who a control came from."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from goldfive.approvals.rules import Rule, matchers_from
from goldfive.approvals.store import RulesFileError
from goldfive.control import ControlMessage
from goldfive.run.approvals import desk_of

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.context import RunContext
    from goldfive.run.handlers import ControlOutcome


def author_of(msg: ControlMessage) -> str:
    """Who sent the control: the payload's author (the front end or the hub sets it)."""
    return str(msg.payload.get("author", "") or "")


def rule_from_always(always: Any, tool: str, meta: Mapping[str, Any], author: str, now_ms: int) -> Rule:
    """The rule an APPROVE's ``always`` asks for: ``{"scope": "run"|"machine", "match":
    {arg: matcher}}``; no ``match`` means every call to this tool. ValueError when it cannot be one."""
    if meta.get("kind") != "tool" or not tool:
        raise ValueError("rules are for tool calls; this is a task approval")
    if always is True:
        always = {}
    if not isinstance(always, Mapping):
        raise ValueError("must be an object: {\"scope\": \"run\"|\"machine\", \"match\": {...}}")
    scope = str(always.get("scope", "run") or "run")
    if scope not in ("run", "machine"):
        raise ValueError(f"scope must be 'run' or 'machine', got {scope!r}")
    matchers = matchers_from(always.get("match") or {})
    return Rule(tool, matchers, author=author, made_at_ms=now_ms, scope=scope)


#: The control verb that lists, adds and removes a run's approval rules (a custom
#: kind: docs/protocol.md#custom-controls). Through the control channel, so every change is in the run's audit trail and holds
#: from the next call.
RULES_VERB = "approval_rules"


def rules_listing(ctx: RunContext) -> str:
    desk = desk_of(ctx)
    machine = desk.machine_rules()
    never = sorted(desk.run_rules.never_auto | (machine.never_auto if machine is not None else set()))
    return json.dumps({"rules": [r.to_dict() for r in desk.rules()], "never_auto": never}, sort_keys=True)


async def rules_control(ctx: RunContext, msg: ControlMessage, mid_task: bool) -> ControlOutcome:
    """``{"op": "list"}``, ``{"op": "add", "rule": {...}}`` (scope run or machine), or
    ``{"op": "remove", "rule_id": "R1"}``. The ack's detail is the listing (JSON) or what changed."""
    from goldfive.run.handlers import fail, ok

    op = str(msg.payload.get("op", "") or "")
    desk = desk_of(ctx)
    if op == "list":
        return ok(msg, rules_listing(ctx))
    if op == "add":
        raw = msg.payload.get("rule")
        try:
            if not isinstance(raw, dict):
                raise ValueError("payload.rule must be a JSON object")
            rule = Rule.from_dict({**raw, "id": "", "author": author_of(msg), "made_at_ms": ctx.session.clock()})
            if rule.scope not in ("run", "machine"):
                raise ValueError(f"scope must be 'run' or 'machine', got {rule.scope!r}")
            added = desk.add_rule(rule)  # applied now: a rule takes effect from the next call
        except (ValueError, RulesFileError) as exc:
            return fail(msg, f"rule not added: {exc}")
        return ok(msg, f"added {added.id}: {added.describe()} (scope {added.scope}, by {added.author or '?'})")
    if op == "remove":
        rule_id = str(msg.payload.get("rule_id", "") or "")
        try:
            removed = desk.remove_rule(rule_id)
        except RulesFileError as exc:
            return fail(msg, f"rule not removed: {exc}")
        if removed is None:
            return fail(msg, f"no rule {rule_id!r}")
        return ok(msg, f"removed {removed.id}: {removed.describe()}")
    return fail(msg, f"{RULES_VERB} needs payload.op list, add or remove; got {op!r}")
