"""Rules for "always": approve a tool call without asking when it is inside what a rule names.

A rule names a tool and, optionally, every argument the call may carry, each with a matcher
(exact value, a path under a directory, a glob, a number range, or any value). Matching is on
the structured arguments, never on a joined string, and a call carrying an argument the rule
does not name is outside the rule: a rule for ``find`` with ``path`` under ``./src`` does not
allow ``find(path="./src", exec="curl ...")``, nor ``path="./src/../etc"`` (paths are
normalised lexically, never by touching the filesystem). A tool on the never-auto list always
asks whatever the rules say.
"""

from __future__ import annotations

import fnmatch
import math
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class MatchKind(StrEnum):
    EXACT = "exact"
    PATH_UNDER = "path_under"
    GLOB = "glob"
    RANGE = "range"
    ANY = "any"


def path_parts(path: str) -> tuple[bool, tuple[str, ...]]:
    """(absolute, components) of ``path`` after lexical normalisation (``.`` and ``..``
    resolved, repeated slashes collapsed). Leading ``..`` components stay."""
    norm = posixpath.normpath(path)
    return norm.startswith("/"), tuple(c for c in norm.split("/") if c not in ("", "."))


def is_under(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or inside it, judged lexically."""
    if "\x00" in path:
        return False
    p_abs, p = path_parts(path)
    d_abs, d = path_parts(directory)
    if p_abs != d_abs or p[: len(d)] != d:
        return False
    return ".." not in p[len(d) :]


@dataclass(frozen=True)
class Matcher:
    kind: MatchKind
    #: EXACT: the value; PATH_UNDER: the directory; GLOB: the pattern.
    value: Any = None
    #: RANGE: inclusive bounds (None: unbounded on that side).
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", MatchKind(self.kind))
        if self.kind in (MatchKind.PATH_UNDER, MatchKind.GLOB) and not isinstance(self.value, str):
            raise ValueError(f"a {self.kind} matcher needs text, got {self.value!r}")
        if self.kind is MatchKind.RANGE and self.low is None and self.high is None:
            raise ValueError("a range matcher needs a low or a high bound")
        if self.kind is MatchKind.PATH_UNDER:
            # Kept normalised so matching splits only the call's value.
            object.__setattr__(self, "_dir", path_parts(self.value))

    def matches(self, value: Any) -> bool:
        kind = self.kind
        if kind is MatchKind.ANY:
            return True
        if kind is MatchKind.EXACT:
            return type(value) is type(self.value) and value == self.value
        if kind is MatchKind.RANGE:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                return False
            return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)
        if not isinstance(value, str) or "\x00" in value:
            return False
        if kind is MatchKind.GLOB:
            # A glob names text; a ".." segment would let "src/*" reach outside src.
            return ".." not in value.split("/") and fnmatch.fnmatchcase(value, self.value)
        d_abs, d = self.__dict__["_dir"]
        p_abs, p = path_parts(value)
        return p_abs == d_abs and p[: len(d)] == d and ".." not in p[len(d) :]

    def describe(self) -> str:
        if self.kind is MatchKind.ANY:
            return "any"
        if self.kind is MatchKind.RANGE:
            return f"in [{'-inf' if self.low is None else self.low}, {'inf' if self.high is None else self.high}]"
        if self.kind is MatchKind.PATH_UNDER:
            return f"under {self.value}"
        if self.kind is MatchKind.GLOB:
            return f"like {self.value}"
        return f"= {self.value!r}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": str(self.kind)}
        if self.value is not None:
            out["value"] = self.value
        if self.low is not None:
            out["low"] = self.low
        if self.high is not None:
            out["high"] = self.high
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Matcher:
        if not isinstance(d, Mapping):
            raise ValueError(f"a matcher must be an object, got {d!r}")
        unknown = set(d) - {"kind", "value", "low", "high"}
        if unknown:
            raise ValueError(f"unknown matcher field(s): {', '.join(sorted(unknown))}")
        try:
            kind = MatchKind(str(d.get("kind")))
        except ValueError:
            raise ValueError(f"matcher kind must be one of {', '.join(MatchKind)}, got {d.get('kind')!r}") from None
        for bound in ("low", "high"):
            b = d.get(bound)
            if b is not None and (isinstance(b, bool) or not isinstance(b, (int, float))):
                raise ValueError(f"range {bound} must be a number, got {b!r}")
        return cls(kind, d.get("value"), d.get("low"), d.get("high"))


@dataclass(frozen=True)
class Rule:
    """Approve calls to ``tool`` without asking. No matchers: every call to the tool.
    With matchers: only calls whose every argument is named and matches."""

    tool: str
    matchers: Mapping[str, Matcher] = field(default_factory=dict)
    id: str = ""
    author: str = ""
    made_at_ms: int = 0
    #: "run" (this run only), "machine" (saved, every run on this machine) or "hub".
    scope: str = "run"

    def matches(self, tool: str, args: Mapping[str, Any]) -> bool:
        if tool != self.tool:
            return False
        matchers = self.matchers
        if not matchers:
            return True
        for name, value in args.items():
            m = matchers.get(name)
            if m is None or not m.matches(value):
                return False
        # A matcher for an argument the call left out holds only when it allows anything.
        return all(name in args or m.kind is MatchKind.ANY for name, m in matchers.items())

    def describe(self) -> str:
        if not self.matchers:
            return f"{self.tool}: always"
        parts = ", ".join(f"{k} {m.describe()}" for k, m in sorted(self.matchers.items()))
        return f"{self.tool}: {parts}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool,
            "match": {k: m.to_dict() for k, m in sorted(self.matchers.items())},
            "author": self.author,
            "made_at_ms": self.made_at_ms,
            "scope": self.scope,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rule:
        """A rule from JSON; ValueError naming the field when it is not one."""
        if not isinstance(d, Mapping):
            raise ValueError("a rule must be a JSON object")
        tool = d.get("tool")
        if not isinstance(tool, str) or not tool:
            raise ValueError("a rule needs a tool name (\"tool\")")
        raw = d.get("match") or {}
        if not isinstance(raw, Mapping):
            raise ValueError("\"match\" must map argument names to matchers")
        matchers: dict[str, Matcher] = {}
        for name, spec in raw.items():
            try:
                matchers[str(name)] = Matcher.from_dict(spec)
            except ValueError as exc:
                raise ValueError(f"argument {name!r}: {exc}") from None
        made = d.get("made_at_ms", 0)
        return cls(
            tool,
            matchers,
            id=str(d.get("id", "") or ""),
            author=str(d.get("author", "") or ""),
            made_at_ms=int(made) if isinstance(made, (int, float)) and not isinstance(made, bool) else 0,
            scope=str(d.get("scope", "run") or "run"),
        )


class RuleBook:
    """The rules of one scope, indexed by tool so a call is checked only against its tool's."""

    def __init__(self, scope: str = "run", rules: Iterable[Rule] = (), never_auto: Iterable[str] = ()) -> None:
        self.scope = scope
        self.never_auto: set[str] = set(never_auto)
        self._by_tool: dict[str, list[Rule]] = {}
        self._next = 1
        for rule in rules:
            self.add(rule)

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_tool.values())

    def rules(self) -> list[Rule]:
        return sorted((r for v in self._by_tool.values() for r in v), key=lambda r: _id_order(r.id))

    def add(self, rule: Rule) -> Rule:
        """Store ``rule``; gives it the next id (``R1``, ``M1``...) when it has none."""
        prefix = self.scope[:1].upper() or "R"
        if not rule.id:
            rule = Rule(rule.tool, dict(rule.matchers), f"{prefix}{self._next}", rule.author, rule.made_at_ms, self.scope)
        elif rule.scope != self.scope:
            rule = Rule(rule.tool, dict(rule.matchers), rule.id, rule.author, rule.made_at_ms, self.scope)
        if any(r.id == rule.id for r in self.rules()):
            raise ValueError(f"a rule {rule.id} already exists")
        n = _id_order(rule.id)[1]
        if rule.id.startswith(prefix) and n >= self._next:
            self._next = n + 1
        self._by_tool.setdefault(rule.tool, []).append(rule)
        return rule

    def remove(self, rule_id: str) -> Rule | None:
        for tool, rules in self._by_tool.items():
            for i, r in enumerate(rules):
                if r.id == rule_id:
                    del rules[i]
                    if not rules:
                        del self._by_tool[tool]
                    return r
        return None

    def match(self, tool: str, args: Mapping[str, Any]) -> Rule | None:
        """The first rule approving this call, or None (always None for a never-auto tool)."""
        if tool in self.never_auto:
            return None
        for rule in self._by_tool.get(tool, ()):
            if rule.matches(tool, args):
                return rule
        return None


def _id_order(rule_id: str) -> tuple[str, int]:
    digits = rule_id.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return rule_id[: len(rule_id) - len(digits)], int(digits) if digits.isdigit() else 0
