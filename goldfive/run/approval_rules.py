"""Rules made while approving ("always"), and who a control came from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldfive.approvals.rules import Matcher, Rule
from goldfive.control import ControlMessage


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
    raw = always.get("match") or {}
    if not isinstance(raw, Mapping):
        raise ValueError("match must map argument names to matchers")
    matchers: dict[str, Matcher] = {}
    for name, spec in raw.items():
        try:
            matchers[str(name)] = Matcher.from_dict(spec)
        except ValueError as exc:
            raise ValueError(f"argument {name!r}: {exc}") from None
    return Rule(tool, matchers, author=author, made_at_ms=now_ms, scope=scope)
