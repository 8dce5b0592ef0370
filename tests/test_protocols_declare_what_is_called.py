"""goldfive/protocols.py declares every method the runtime calls on a Steerer, a Planner and an
agent adapter (issue 22 found the Steerer declaring 1 of the 8; ``unstart`` was the last one
missing), so a class written to the protocol, not derived from the shipped one, works. Read from
the AST: each call ``steerer.m(...)``, ``ctx.steerer.m(...)``, ``self.steerer.m(...)`` (and the same for
planner and adapter). What the runtime looks for with getattr is optional, named in each
protocol's docstring.

The same for the server's seam to a run placer (goldfive.remote.service.Placer): what the
server, the Runs service and a fleet's takeover call on ``placer`` / ``self.placer``, which
before declared ``place`` alone while ``bind``, ``resume_recorded``, ``close`` and
``place_again`` were called on it too."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from goldfive.protocols import AgentAdapter, Planner, Steerer
from goldfive.remote.service import Placer

ROOT = Path(__file__).resolve().parent.parent / "goldfive"


NAMES = ("steerer", "planner", "adapter", "placer")

#: Modules that hold the Ray placer itself, not the seam: the CLI builds one and checks its
#: listen address, the placer calls its own methods.
NOT_THE_SEAM = {"placer": ("goldfive/cli/remote.py", "goldfive/placement/ray_placer.py")}


@functools.cache
def _calls() -> dict[str, dict[str, str]]:
    """Name -> method -> one place it is called, for every call ``name.method(…)`` or
    ``ctx.name.method(…)`` / ``self.name.method(…)`` in goldfive/ (generated code aside)."""
    found: dict[str, dict[str, str]] = {name: {} for name in NAMES}
    for path in sorted(ROOT.rglob("*.py")):
        if "pb" in path.relative_to(ROOT).parts[:1]:
            continue
        text = path.read_text(encoding="utf-8")
        if not any(f"{name}." in text for name in NAMES):
            continue
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner = node.func.value
            if isinstance(owner, ast.Name):
                name = owner.id
            elif isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id in ("ctx", "self", "run"):
                name = owner.attr  # the run's or an object's own: ctx.steerer, self.planner
            else:
                continue
            where = path.relative_to(ROOT.parent).as_posix()
            if name in found and where not in NOT_THE_SEAM.get(name, ()):
                found[name].setdefault(node.func.attr, f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    return found


@pytest.mark.parametrize(
    ("name", "protocol"), [("steerer", Steerer), ("planner", Planner), ("adapter", AgentAdapter), ("placer", Placer)]
)
def test_every_method_the_runtime_calls_is_declared(name: str, protocol: type) -> None:
    called = _calls()[name]
    declared = {m for m in dir(protocol) if not m.startswith("_")}
    assert called, f"no call on a {name} found: the scan is broken"
    assert {m: where for m, where in called.items() if m not in declared} == {}


def test_the_placer_scan_sees_what_the_server_and_the_fleet_call() -> None:
    """The scan reads the calls through a variable (server.py), an attribute (the Runs
    service, the takeover) and skips the CLI's own RayPlacer."""
    assert {"bind", "place", "place_again", "resume_recorded", "close"} <= set(_calls()["placer"])
    assert "check_listen" not in _calls()["placer"]
