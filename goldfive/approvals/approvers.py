"""Who may decide which approvals on a hub: ``goldfive serve --approvers deploy=alice,bob``.

Each rule names a tool (or a glob of tool names; ``*`` is every approval, task approvals and
questions included) and the operators who may decide its calls. A decision on an approval some
rules match may be made only by a name every one of them lists, whatever the client (``ctl``,
the TUI through ``attach`` or ``goldfive web``, a link page): everyone else is refused with a
sentence naming who may. The same holds for an "always" rule made for such a tool (a rule
decides every later call). The name checked is the one the hub verified (the token's name, or
whom the hub issued a link to), never an author a client claims.

The check is the hub's, on what it has seen of the run: a decision made in the runner's own
process (its local TUI) never reaches the hub, and its ledger entry says "reported".
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from goldfive.control import ControlKind, ControlMessage
from goldfive.errors import ServeConfigError

__all__ = ["Approvers"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.@-]{0,63}")
#: The custom verb that adds rules for "always" (goldfive.run.approval_rules.RULES_VERB).
_RULES_VERB = "approval_rules"


@dataclass(frozen=True)
class Approvers:
    """The ``--approvers`` rules: ``(tool pattern, names allowed)`` in the order given."""

    rules: tuple[tuple[str, frozenset[str]], ...] = ()

    @classmethod
    def parse(cls, specs: Iterable[str]) -> Approvers:
        """From ``TOOL=NAME,NAME`` texts; ServeConfigError naming a malformed one."""
        rules = []
        for spec in specs:
            pattern, sep, names_text = spec.partition("=")
            pattern = pattern.strip()
            names = [n.strip() for n in names_text.split(",") if n.strip()]
            if not sep or not pattern or not names:
                raise ServeConfigError(f"--approvers {spec!r} must be TOOL=NAME[,NAME...], e.g. deploy=alice,bob")
            bad = [n for n in names if not _NAME.fullmatch(n)]
            if bad:
                raise ServeConfigError(f"--approvers {spec!r}: {bad[0]!r} is not a token name (letters, digits, _ . @ -)")
            rules.append((pattern, frozenset(names)))
        return cls(tuple(rules))

    def __bool__(self) -> bool:
        return bool(self.rules)

    def names(self) -> frozenset[str]:
        """Every name some rule lists."""
        return frozenset(n for _, names in self.rules for n in names)

    def allowed(self, tool_name: str) -> frozenset[str] | None:
        """Who may decide a call of ``tool_name`` ("" for an approval of no tool): the names
        every matching rule lists; None when no rule matches (any operator may)."""
        found: frozenset[str] | None = None
        for pattern, names in self.rules:
            if fnmatch.fnmatchcase(tool_name, pattern) or pattern == "*":
                found = names if found is None else found & names
        return found

    def refusal(self, who: str, tool_name: str, what: str = "") -> str:
        """Why ``who`` may not decide an approval of ``tool_name`` ("" when they may)."""
        allowed = self.allowed(tool_name)
        if allowed is None or who in allowed:
            return ""
        thing = what or (f"calls of {tool_name}" if tool_name else "this approval")
        names = ", ".join(sorted(allowed)) or "nobody"
        return f"{who or 'an anonymous caller'} may not decide {thing}: only {names} may (serve --approvers)"

    def control_refusal(self, msg: ControlMessage, pending: Mapping[str, Any], who: str) -> str:
        """Why ``who`` may not send ``msg`` to a run whose pending approvals (target id ->
        a view with ``tool_name``) are ``pending``; "" when they may or no rule applies."""
        if not self.rules:
            return ""
        if msg.kind in (ControlKind.APPROVE, ControlKind.REJECT, ControlKind.ANSWER):
            target = str(msg.payload.get("target_id", "") or "")
            view = pending.get(target)
            if view is None:  # a decision on something the hub has not seen cannot be checked
                shown = target if len(target) <= 64 else target[:64] + "..."
                return f"no pending approval {shown!r} is known to this hub, so who may decide it cannot be checked (serve --approvers)"
            return self.refusal(who, str(view.tool_name), f"{view.tool_name or view.kind} approval {target}")
        if msg.kind == _RULES_VERB and msg.payload.get("op") == "add":
            rule = msg.payload.get("rule")
            tool = str(rule.get("tool", "") or "") if isinstance(rule, dict) else ""
            return self.refusal(who, tool, f"rules for {tool or 'this tool'} (a rule decides its calls)")
        return ""
