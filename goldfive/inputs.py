"""Checked inputs of a run: the agent a person names (``MODULE:FUNCTION``), a plan file or plan
JSON, and the planner built from them; used by ``goldfive run`` and ``resume`` and by a hub that
starts runs (goldfive.remote.launch), which imports no CLI module.

Every problem is an :class:`InputError` whose message is one line naming what was wrong and
where, so the CLI can print it without a traceback.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from goldfive.adapters.frameworks import framework_for_module, framework_of
from goldfive.errors import GoldfiveError
from goldfive.planners.assemble import build_generated_plan
from goldfive.planners.parse import AnswerError, parse_plan_answer
from goldfive.types import Plan

__all__ = ["InputError", "load_agent", "load_plan_file", "parse_plan_text"]


class InputError(GoldfiveError, ValueError):
    """A command-line input that cannot be used (bad agent spec, plan file, recording)."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def load_agent(spec: str, *, search_dir: str | None = None) -> Callable[..., Any]:
    """Import ``MODULE:FUNCTION`` (FUNCTION may be dotted, ``mod:obj.method``) and check that it
    is an async callable taking ``(task, session)`` or ``(task, session, tools)``, an
    AgentAdapter, or a framework agent (see goldfive.adapters.frameworks).
    ``search_dir`` (default: the current directory) is put first on ``sys.path``."""
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name.strip() or not attr_path.strip() or ":" in attr_path:
        raise InputError(f"agent {spec!r} must look like MODULE:FUNCTION, e.g. mymod:agent")
    where = os.path.abspath(search_dir or os.getcwd())
    if where not in sys.path:
        sys.path.insert(0, where)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        fw = framework_for_module(exc.name or "")
        if fw is not None:
            raise InputError(f"module {module_name!r} needs {fw.name}, which is not installed: {fw.install_hint()}") from None
        if exc.name == module_name or (exc.name and module_name.startswith(exc.name + ".")):
            raise InputError(f"cannot import module {module_name!r}: no such module (searched {where} and sys.path)") from None
        raise InputError(f"cannot import module {module_name!r}: {_one_line(exc)}") from None
    except SystemExit as exc:  # a module that exits on import must not end the process importing it (a hub)
        raise InputError(f"importing module {module_name!r} failed: it called sys.exit({exc.code!r})") from None
    except BaseException as exc:  # isolation boundary: the user's module raised while importing
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise InputError(f"importing module {module_name!r} failed: {type(exc).__name__}: {_one_line(exc)}") from None
    obj: Any = module
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            raise InputError(f"module {module_name!r} has no attribute {attr_path!r}")
        obj = getattr(obj, part)
    if not _is_framework_agent(obj):
        _check_async_agent(obj, spec)
    return obj  # type: ignore[no-any-return]


def _is_framework_agent(obj: Any) -> bool:
    """An AgentAdapter, or an object of a framework goldfive has an adapter for."""
    return (hasattr(obj, "invoke") and hasattr(obj, "available_agents")) or framework_of(obj) is not None


def _check_async_agent(obj: Any, spec: str) -> None:
    if not callable(obj):
        name = type(obj).__name__
        article = "an" if name[:1].lower() in "aeiou" else "a"
        raise InputError(f"{spec} is {article} {name} ({obj!r:.40}), not an async function")
    is_async = inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(getattr(obj, "__call__", None))
    if not is_async:
        raise InputError(f"{spec} is not an async function: define it with 'async def {spec.split(':')[1].split('.')[-1]}(task, session)'")
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return  # builtins and C callables: the call itself will tell
    for arity in (2, 3):
        try:
            sig.bind(*([None] * arity))
            return
        except TypeError:
            continue
    raise InputError(f"{spec} must accept (task, session) or (task, session, tools); its signature is {sig}")


def load_plan_file(path: str | os.PathLike[str]) -> Plan:
    """A plan in the LLMPlanner JSON shape ``{"summary", "tasks": [{"id", "title",
    "description"}], "edges": [{"from_task_id", "to_task_id"}]}``, validated."""
    name = os.fspath(path)
    p = Path(path)
    if not p.is_file():
        raise InputError(f"plan file {name!r} not found" if not p.exists() else f"plan file {name!r} is not a file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read plan file {name!r}: {_one_line(exc)}") from None
    return parse_plan_text(text, name)


def parse_plan_text(text: str, name: str = "the plan") -> Plan:
    """:func:`load_plan_file` for plan JSON already read (``name`` says where it came from)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"{name}: the JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise InputError(f"{name}: the plan must be a JSON object, got {type(data).__name__}")
    try:
        raw = parse_plan_answer(text)
        return build_generated_plan(raw, goals=[], available_agents=[])
    except AnswerError as exc:
        raise InputError(f"{name}: {_one_line(exc)}") from None


@dataclass(frozen=True)
class Planning:
    planner: Any
    #: The LLM client to close after the run (None with --plan).
    client: Any = None


def make_planner(plan_path: str | None, base_url: str | None, model: str | None, api_key: str | None) -> Planning:
    """The plan file as a StaticPlanner, else the LLM planner over an OpenAI-compatible server
    (flags first, then the environment). Shared by ``goldfive run`` and ``goldfive serve``."""
    from goldfive.planners.static import StaticPlanner

    if plan_path is not None:
        return Planning(StaticPlanner(load_plan_file(plan_path)))
    from goldfive.llm.openai_compat import OpenAICompatClient
    from goldfive.planners.llm import LLMPlanner
    from goldfive.settings import LLMSettings

    env = LLMSettings.from_env()
    chosen_model = model or env.model
    if not chosen_model:
        raise InputError("no plan and no model: pass --plan FILE, or --model NAME (or set GOLDFIVE_LLM_MODEL) for the LLM planner")
    client = OpenAICompatClient(base_url=base_url or env.base_url, model=chosen_model, api_key=api_key or env.api_key)
    return Planning(LLMPlanner(call_llm=client.call_llm, model=chosen_model), client)
