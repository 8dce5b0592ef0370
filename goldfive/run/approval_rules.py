"""Rules made while approving ("always"), and the ``approval_rules`` verb."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from goldfive.approvals.rules import Rule, matchers_from
from goldfive.approvals.store import RulesFileError
from goldfive.control import AppliedAs
from goldfive.controls.payloads import RULES_VERB, Always, ApprovalRules, Control
from goldfive.run.approvals import desk_of
from goldfive.run.outcome import ControlOutcome, fail, ok

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.run.parts import Run

__all__ = ["RULES_VERB", "machine_note", "rule_from_always", "rules_control", "rules_listing"]

#: What a machine-scope rule added through a run that does not read the machine's rules says
#: (a library Runner, ``goldfive demo``, a run a hub hosts for a test: RuntimeConfig's
#: ``use_machine_rules`` is off). The rule is saved; this run keeps to its own rules.
MACHINE_NOTE = (
    "; saved for this machine, but this run does not read machine rules (started without"
    " use_machine_rules), so it does not apply here: add it with scope run for this run"
)


def machine_note(ctx: Run, scope: str) -> str:
    """MACHINE_NOTE when a ``scope`` rule would be ignored by this run, else ""."""
    return MACHINE_NOTE if scope == "machine" and not desk_of(ctx).use_machine_rules else ""


def rule_from_always(always: Always, tool: str, meta: Mapping[str, Any], author: str, now_ms: int) -> Rule:
    """The rule an APPROVE's ``always`` asks for; no ``match`` means every call to this tool.
    ValueError when it cannot be one."""
    if meta.get("kind") != "tool" or not tool:
        raise ValueError("rules are for tool calls; this is a task approval")
    matchers = matchers_from(always.match)
    return Rule(tool, matchers, author=author, made_at_ms=now_ms, scope=always.scope)


def rules_listing(ctx: Run) -> str:
    desk = desk_of(ctx)
    machine = desk.machine_rules()
    never = sorted(desk.run_rules.never_auto | (machine.never_auto if machine is not None else set()))
    return json.dumps({"rules": [r.to_dict() for r in desk.rules()], "never_auto": never}, sort_keys=True)


async def rules_control(ctx: Run, c: Control[ApprovalRules], mid_task: bool) -> ControlOutcome:
    """``{"op": "list"}``, ``{"op": "add", "rule": {...}}`` (scope run or machine), or
    ``{"op": "remove", "rule_id": "R1"}``. The ack's detail is the listing (JSON) or what changed."""
    p = c.payload
    op = p.op
    desk = desk_of(ctx)
    if op == "list":
        return ok(c, AppliedAs.RULES, rules_listing(ctx))
    if op == "add":
        raw = p.rule
        try:
            if raw is None:
                raise ValueError("payload.rule must be a JSON object")
            rule = Rule.from_dict({**raw, "id": "", "author": p.author, "made_at_ms": ctx.session.clock()})
            if rule.scope not in ("run", "machine"):
                raise ValueError(f"scope must be 'run' or 'machine', got {rule.scope!r}")
            added = desk.add_rule(rule)  # applied now: a rule takes effect from the next call
        except (ValueError, RulesFileError) as exc:
            return fail(c, f"rule not added: {exc}")
        said = f"added {added.id}: {added.describe()} (scope {added.scope}, by {added.author or '?'})"
        return ok(c, AppliedAs.RULES, said + machine_note(ctx, added.scope))
    if op == "remove":
        rule_id = p.rule_id
        try:
            removed = desk.remove_rule(rule_id)
        except RulesFileError as exc:
            return fail(c, f"rule not removed: {exc}")
        if removed is None:
            return fail(c, f"no rule {rule_id!r}")
        return ok(c, AppliedAs.RULES, f"removed {removed.id}: {removed.describe()}")
    return fail(c, f"{RULES_VERB} needs payload.op list, add or remove; got {op!r}")
