"""No import circles anywhere in the house (scripts/import_graph.py reads them from the AST,
type-only imports included), for goldfive/ and the TUI (tui/, installed as goldfive_tui).

Before the typed-controls work, ``Session.context`` (a back-pointer from a value type to the
run) tied 17 modules into one circle; the run is a context variable now (goldfive.run.current()).
The last circle was inside goldfive.run, between RunContext and the parts it holds, which typed
it back: its ControlLoop, the handlers, the approvals, the tools. The parts see the run through
``goldfive.run.parts.Run`` (a Protocol, in a module that imports nothing of the run but its
leaves), so RunContext imports its parts and none of them imports it. The TUI's last circle
(the run screen <-> its controls, the screen <-> replay) went the same way.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

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
PACKAGES = sorted(GRAPH.PACKAGES)

#: Issue 22's gate: at most this many arrows run back up in the house's import graph.
MOST_ARROWS_BACK_UP = 8


@pytest.fixture(scope="module")
def graphs() -> dict[str, Any]:
    return {package: GRAPH.build(package) for package in PACKAGES}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package: str, graphs: dict[str, Any]) -> None:
    found = GRAPH.circles(graphs[package])
    named = [" -> ".join(c) for c in found]
    assert named == [], f"import circles in {package} (python scripts/import_graph.py --package {package}): {named}"


def test_the_house_has_at_most_8_arrows_back_up(graphs: dict[str, Any]) -> None:
    back = {package: GRAPH.report(graph)[1] for package, graph in graphs.items()}
    assert sum(back.values()) <= MOST_ARROWS_BACK_UP, back


def test_a_circle_is_found_and_named(tmp_path: Path) -> None:
    # The check above can fail: two modules that import each other (one only for its types)
    # are a circle, named with its arrow back up.
    pkg = tmp_path / "goldfive"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from goldfive.b import B\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from goldfive.a import A\nB = 1\n")
    graph = GRAPH.build("goldfive", root=tmp_path)
    assert GRAPH.circles(graph) == [["goldfive.a", "goldfive.b"]]
    circles, back, text = GRAPH.report(graph)
    assert (circles, back) == (1, 1)
    assert "circle of 2: goldfive.a, goldfive.b" in text


def test_inside_the_run_only_the_context_variable_imports_runcontext(graphs: dict[str, Any]) -> None:
    # The parts (ControlLoop, handlers, approvals, tools) are typed by goldfive.run.parts.Run;
    # the context variable that holds the current run (current() returns a RunContext) sits above it.
    graph = graphs["goldfive"]
    into_context = sorted(a for a, b in graph.arrows if b == "goldfive.run.context" and a.startswith("goldfive.run."))
    assert into_context == ["goldfive.run.current_run"]


def test_the_value_types_import_nothing_of_the_run(graphs: dict[str, Any]) -> None:
    graph = graphs["goldfive"]
    assert [b for a, b in graph.arrows if a == "goldfive.types" and b.startswith("goldfive.run")] == []
