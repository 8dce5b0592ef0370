r"""Rules for "always": approve a tool call without asking when it is inside what a rule names.

A rule names a tool and, optionally, every argument the call may carry, each with a matcher
(exact value, a path under a directory, a glob, a number range, or any value). Matching is on
the structured arguments, never on a joined string, and a call carrying an argument the rule
does not name is outside the rule: a rule for ``find`` with ``path`` under ``./src`` does not
allow ``find(path="./src", exec="curl ...")``, nor ``path="./src/../etc"`` (paths are
normalised lexically, never by touching the filesystem). A tool on the never-auto list always
asks whatever the rules say.

What each matcher holds, exactly:
- ``exact``: the same value with the same JSON type at every depth (``same_value``): ``0`` is
  not ``false``, ``1`` is not ``true`` and not ``1.0``, a list is not a tuple. A person approved
  the value as the agent sent it; a call that differs only in type is asked again.
- ``range``: a number (not a bool) between the bounds, compared exactly: a huge integer is
  outside ``[0, 10]``, never an error; infinities and NaN are outside every range.
- ``path_under``: a text path that, normalised lexically, is the directory or inside it, and
  holds no backslash: on Linux ``\`` is a name character, but a tool may hand the path to a
  shell (where ``..\/`` is ``../``) or to Windows-aware code (where it separates), so such a
  path is never inside, and the person is asked. A directory with a backslash is refused.
- ``glob``: text matching the pattern with no ``..`` segment, segments split at ``/`` or ``\``.
"""

from __future__ import annotations

import fnmatch
import math
import posixpath
import re
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


_SEGMENTS = re.compile(r"[/\\]")


def same_value(a: Any, b: Any) -> bool:
    """Type-strict deep equality (``exact``): equal values of the same type at every depth,
    dict keys included (``{0: x}`` is not ``{False: x}``). Iterative, so a value nested deeper
    than the recursion limit is answered, and the work is bounded by the smaller value."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if len(x) != len(y) or {(type(k), k) for k in x} != {(type(k), k) for k in y}:
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, (list, tuple)):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y:
            return False
    return True


def _in_range(value: Any, low: float | None, high: float | None) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    # int against int or float compares exactly in Python (no conversion to float, which
    # overflows for a huge int); a NaN bound holds nothing.
    return (low is None or value >= low) and (high is None or value <= high)


def is_under(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or inside it, judged lexically (a path holding a NUL
    or a backslash never is)."""
    if "\x00" in path or "\\" in path:
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
            if "\\" in self.value or "\x00" in self.value:
                raise ValueError(f"a path_under directory cannot hold a backslash or a NUL: {self.value!r}")
            # Kept normalised so matching splits only the call's value.
            object.__setattr__(self, "_dir", path_parts(self.value))

    def matches(self, value: Any) -> bool:
        kind = self.kind
        if kind is MatchKind.ANY:
            return True
        if kind is MatchKind.EXACT:
            return same_value(self.value, value)
        if kind is MatchKind.RANGE:
            return _in_range(value, self.low, self.high)
        if not isinstance(value, str) or "\x00" in value:
            return False
        if kind is MatchKind.GLOB:
            # A glob names text; a ".." segment would let "src/*" reach outside src.
            return ".." not in _SEGMENTS.split(value) and fnmatch.fnmatchcase(value, self.value)
        if "\\" in value:
            return False  # see the module's docstring: never inside, the person is asked
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


def matchers_from(raw: Any) -> dict[str, Matcher]:
    """``{"argument": matcher spec}`` (a rule's "match") as Matchers; ValueError naming the
    argument whose spec is wrong."""
    if not isinstance(raw, Mapping):
        raise ValueError("\"match\" must map argument names to matchers")
    matchers: dict[str, Matcher] = {}
    for name, spec in raw.items():
        try:
            matchers[str(name)] = Matcher.from_dict(spec)
        except ValueError as exc:
            raise ValueError(f"argument {name!r}: {exc}") from None
    return matchers


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

    def __post_init__(self) -> None:
        # Cheap matchers first, so a call outside the rule is turned away early.
        order = sorted(self.matchers.items(), key=lambda kv: (_COST[kv[1].kind], kv[0]))
        object.__setattr__(self, "_order", tuple(order))

    def matches(self, tool: str, args: Mapping[str, Any]) -> bool:
        if tool != self.tool:
            return False
        matchers = self.matchers
        if not matchers:
            return True
        for name in args:
            if name not in matchers:
                return False  # an argument the rule does not name: outside it
        for name, m in self.__dict__["_order"]:
            if name in args:
                if not m.matches(args[name]):
                    return False
            elif m.kind is not MatchKind.ANY:
                return False  # left out: only a matcher allowing anything holds
        return True

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
        matchers = matchers_from(d.get("match") or {})
        made = d.get("made_at_ms", 0)
        return cls(
            tool,
            matchers,
            id=str(d.get("id", "") or ""),
            author=str(d.get("author", "") or ""),
            made_at_ms=int(made) if _in_range(made, None, None) else 0,
            scope=str(d.get("scope", "run") or "run"),
        )


_COST = {MatchKind.ANY: 0, MatchKind.EXACT: 1, MatchKind.RANGE: 2, MatchKind.GLOB: 3, MatchKind.PATH_UNDER: 4}


def _exact_key(value: Any) -> tuple[str, Any] | None:
    """The index key of an exact value (its type is part of it: 1, 1.0 and True differ)."""
    try:
        hash(value)
    except TypeError:
        return None
    return type(value).__name__, value


class _ToolRules:
    """One tool's rules: those with an exact matcher indexed by that argument's value, so a
    call is tried only against the rules its exact values select, then the unindexed rest."""

    def __init__(self) -> None:
        self.keyed: dict[str, dict[tuple[str, Any], list[tuple[int, Rule]]]] = {}
        self.rest: list[tuple[int, Rule]] = []

    def add(self, seq: int, rule: Rule) -> None:
        for name, m in sorted(rule.matchers.items()):
            key = _exact_key(m.value) if m.kind is MatchKind.EXACT else None
            if key is not None:
                self.keyed.setdefault(name, {}).setdefault(key, []).append((seq, rule))
                return
        self.rest.append((seq, rule))

    def remove(self, rule_id: str) -> Rule | None:
        for groups in self.keyed.values():
            for key, rules in list(groups.items()):
                for i, (_, r) in enumerate(rules):
                    if r.id == rule_id:
                        del rules[i]
                        if not rules:
                            del groups[key]
                        return r
        for i, (_, r) in enumerate(self.rest):
            if r.id == rule_id:
                del self.rest[i]
                return r
        return None

    def all(self) -> list[Rule]:
        out = [r for g in self.keyed.values() for rules in g.values() for _, r in rules]
        return out + [r for _, r in self.rest]

    def __len__(self) -> int:
        return len(self.all())

    def match(self, tool: str, args: Mapping[str, Any]) -> Rule | None:
        best: tuple[int, Rule] | None = None
        for name, groups in self.keyed.items():
            if name not in args:
                continue
            key = _exact_key(args[name])
            for seq, rule in groups.get(key, ()) if key is not None else ():
                if (best is None or seq < best[0]) and rule.matches(tool, args):
                    best = (seq, rule)
                    break
        for seq, rule in self.rest:
            if best is not None and seq > best[0]:
                break
            if rule.matches(tool, args):
                best = (seq, rule)
                break
        return best[1] if best is not None else None


class RuleBook:
    """The rules of one scope, indexed by tool (and by exact argument values) so a call is
    checked only against the rules that could approve it."""

    def __init__(self, scope: str = "run", rules: Iterable[Rule] = (), never_auto: Iterable[str] = ()) -> None:
        self.scope = scope
        self.never_auto: set[str] = set(never_auto)
        self._by_tool: dict[str, _ToolRules] = {}
        self._ids: set[str] = set()
        self._next = 1
        self._seq = 0
        for rule in rules:
            self.add(rule)

    def __len__(self) -> int:
        return len(self._ids)

    def rules(self) -> list[Rule]:
        return sorted((r for v in self._by_tool.values() for r in v.all()), key=lambda r: _id_order(r.id))

    def add(self, rule: Rule) -> Rule:
        """Store ``rule``; gives it the next id (``R1``, ``M1``...) when it has none."""
        prefix = self.scope[:1].upper() or "R"
        if not rule.id:
            rule = Rule(rule.tool, dict(rule.matchers), f"{prefix}{self._next}", rule.author, rule.made_at_ms, self.scope)
        elif rule.scope != self.scope:
            rule = Rule(rule.tool, dict(rule.matchers), rule.id, rule.author, rule.made_at_ms, self.scope)
        if rule.id in self._ids:
            raise ValueError(f"a rule {rule.id} already exists")
        n = _id_order(rule.id)[1]
        if rule.id.startswith(prefix) and n >= self._next:
            self._next = n + 1
        self._seq += 1
        self._by_tool.setdefault(rule.tool, _ToolRules()).add(self._seq, rule)
        self._ids.add(rule.id)
        return rule

    def remove(self, rule_id: str) -> Rule | None:
        if rule_id not in self._ids:
            return None
        for tool, rules in self._by_tool.items():
            removed = rules.remove(rule_id)
            if removed is not None:
                if not len(rules):
                    del self._by_tool[tool]
                self._ids.discard(rule_id)
                return removed
        return None

    def match(self, tool: str, args: Mapping[str, Any]) -> Rule | None:
        """The earliest-added rule approving this call, or None (always None for a
        never-auto tool)."""
        if tool in self.never_auto:
            return None
        rules = self._by_tool.get(tool)
        return rules.match(tool, args) if rules is not None else None


def _id_order(rule_id: str) -> tuple[str, int]:
    digits = rule_id.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return rule_id[: len(rule_id) - len(digits)], int(digits) if digits.isdigit() else 0
