"""Import circles (scripts/import_graph.py reads them from the AST, type-only imports included)
stay out of the modules the typed-controls work untangled.

Before it, ``Session.context`` (a back-pointer from a value type to the run) tied 17 modules
into one circle: goldfive.types -> goldfive.run.context -> ... -> goldfive.types. The run is a
context variable now (goldfive.run.current()); the value types, the controls, the ack table,
the event table, the views and resume sit in no circle. One circle is left inside
goldfive.run, between RunContext and the parts it holds that type it back (its ControlLoop,
the handlers, the tools); it may not grow or reach outside goldfive.run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_graph", module)
    spec.loader.exec_module(module)
    return module


GRAPH = _script()

#: RunContext and the parts of the run it holds, which type it back.
RUN_CORE = frozenset(
    {
        "goldfive.run.approval_rules",
        "goldfive.run.approvals",
        "goldfive.run.context",
        "goldfive.run.control_loop",
        "goldfive.run.current_run",
        "goldfive.run.handlers",
        "goldfive.run.tools",
        "goldfive.run.user_tools",
    }
)

#: Modules this work changed outside that circle: none may be in any circle.
TOUCHED = frozenset(
    {
        "goldfive.types",
        "goldfive.control",
        "goldfive.controls",
        "goldfive.controls.payloads",
        "goldfive.conv",
        "goldfive.errors",
        "goldfive.protocols",
        "goldfive.event_kinds",
        "goldfive.event_format",
        "goldfive.view",
        "goldfive.view.models",
        "goldfive.view.state",
        "goldfive.durable.recover",
        "goldfive.durable.resume",
        "goldfive.steerer",
        "goldfive.runner",
        "goldfive.executors.base",
        "goldfive.run",
        "goldfive.run.acks",
        "goldfive.run.outcome",
        "goldfive.run.validate",
        "goldfive.adapters.callable",
        "goldfive.adapters.llm_agent",
        "goldfive.adapters.langgraph",
        "goldfive.adapters.pydantic_ai",
        "goldfive.adapters.adk",
        "goldfive.adapters.adk._hooks",
        "goldfive.adapters.openai_agents.adapter",
        "goldfive.adapters.openai_agents.turn",
    }
)


@pytest.fixture(scope="module")
def circles() -> list[list[str]]:
    found: list[list[str]] = GRAPH.circles(GRAPH.build("goldfive"))
    return found


def test_the_modules_named_here_exist(circles: list[list[str]]) -> None:
    modules = GRAPH.build("goldfive").modules
    assert (TOUCHED | RUN_CORE) - modules == set()


def test_no_module_this_work_untangled_is_in_a_circle(circles: list[list[str]]) -> None:
    tangled = {m: c for c in circles for m in c if m in TOUCHED}
    assert tangled == {}


def test_the_circle_left_in_the_run_stays_inside_it_and_does_not_grow(circles: list[list[str]]) -> None:
    for circle in circles:
        if set(circle) & RUN_CORE:
            assert set(circle) <= RUN_CORE, f"the run's circle grew: {sorted(set(circle) - RUN_CORE)}"


def test_the_value_types_import_nothing_of_the_run() -> None:
    graph = GRAPH.build("goldfive")
    assert [b for a, b in graph.arrows if a == "goldfive.types" and b.startswith("goldfive.run")] == []


def test_no_circle_but_the_runs(circles: list[list[str]]) -> None:
    # Merges made two new ones (goldfive.cli <-> goldfive.cli.web, the Claude SDK's tools <->
    # its turn) that the tests above did not see: every circle but the run's is refused.
    others = [sorted(c) for c in circles if not set(c) <= RUN_CORE]
    assert others == []
