"""The core never imports an optional extra, and a framework that is not installed is one line.

The check runs in a fresh interpreter whose import system refuses every optional package, as on
a machine where only ``pip install goldfive`` was run, and imports every goldfive and TUI module
except the optional adapters themselves.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from goldfive.adapters.frameworks import FRAMEWORKS, FrameworkNotInstalled, adapter_for, framework_of

#: Top-level names of the packages the optional extras bring.
OPTIONAL_PACKAGES = ("pydantic_ai", "agents", "google.adk", "langgraph", "langchain_core", "langchain", "claude_agent_sdk", "ray", "psycopg", "psycopg_pool", "textual_serve", "playwright", "aiohttp", "opentelemetry")
#: The modules that exist only to use an extra; they are allowed (and expected) to need one.
OPTIONAL_MODULES = ("goldfive.adapters.pydantic_ai", "goldfive.adapters.openai_agents", "goldfive.adapters.adk", "goldfive.adapters.langgraph", "goldfive.adapters.claude_agent_sdk", "goldfive.scale", "goldfive.placement.ray_placer", "goldfive.store.postgres", "goldfive.store.postgres_registry", "goldfive.store.postgres_fleet", "goldfive.hub.fleet", "goldfive.otel", "goldfive.phone.server", "goldfive.remote.web_guard", "goldfive_tui.web")

_SCRIPT = textwrap.dedent(
    """
    import importlib, importlib.abc, pkgutil, sys
    BLOCKED = {blocked!r}
    OPTIONAL = {optional!r}

    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)", name=name)
            return None

    sys.meta_path.insert(0, Refuse())
    import goldfive, goldfive_tui
    bad = []
    for pkg in (goldfive, goldfive_tui):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if any(info.name == o or info.name.startswith(o + ".") for o in OPTIONAL):
                continue
            try:
                importlib.import_module(info.name)
            except Exception as exc:
                bad.append(f"{{info.name}}: {{type(exc).__name__}}: {{exc}}")
    leaked = sorted(m for m in sys.modules if any(m == b or m.startswith(b + ".") for b in BLOCKED))
    print("\\n".join(bad + [f"imported {{m}}" for m in leaked]) or "clean")
    """
)


def test_core_and_tui_import_without_any_extra() -> None:
    script = _SCRIPT.format(blocked=OPTIONAL_PACKAGES, optional=OPTIONAL_MODULES)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "clean", out.stdout


class _FakeFrameworkAgent:
    """Looks, by its module, like an agent of a framework whose adapter is missing."""


def test_framework_object_without_its_adapter_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_FakeFrameworkAgent, "__module__", "pydantic_ai.agent")
    monkeypatch.setitem(sys.modules, "goldfive.adapters.pydantic_ai", None)  # import of it fails
    agent = _FakeFrameworkAgent()
    assert framework_of(agent) is FRAMEWORKS[0]
    with pytest.raises(FrameworkNotInstalled) as info:
        adapter_for(agent)
    message = str(info.value)
    assert "\n" not in message
    assert "pip install 'goldfive[pydantic-ai]'" in message


def test_recognises_framework_by_base_class_module(monkeypatch: pytest.MonkeyPatch) -> None:
    class Base:
        pass

    monkeypatch.setattr(Base, "__module__", "google.adk.agents.llm_agent")

    class Mine(Base):
        pass

    assert framework_of(Mine()) is not None and framework_of(Mine()).extra == "adk"  # type: ignore[union-attr]
    assert framework_of(object()) is None


def test_not_an_agent_names_what_is_accepted() -> None:
    with pytest.raises(TypeError, match="PydanticAI"):
        adapter_for(42)


def test_cli_names_the_extra_when_the_users_module_needs_a_missing_framework(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from goldfive.inputs import InputError, load_agent

    (tmp_path / "needs_lg.py").write_text("import langgraph.graph\nagent = None\n")
    monkeypatch.setitem(sys.modules, "langgraph", None)
    with pytest.raises(InputError) as info:
        load_agent("needs_lg:agent", search_dir=str(tmp_path))
    assert "pip install 'goldfive[langgraph]'" in str(info.value)
