"""Which adapter takes a given agent object: the framework registry.

``Runner(agent=...)`` and ``goldfive run MODULE:OBJECT`` accept an agent as it is: an
AgentAdapter, a plain async function, or a framework's own object (a PydanticAI ``Agent``, an
OpenAI Agents SDK ``Agent``, a Google ADK agent, a compiled LangGraph graph, the Claude Agent
SDK's ``ClaudeAgentOptions``). The framework is
recognised from the module its class (or a base class) comes from, so this file imports no
framework; the adapter module is imported only when such an object is given. A framework whose
adapter cannot be imported (the extra is not installed) is one line naming the extra.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any

from goldfive.errors import GoldfiveError

__all__ = ["FRAMEWORKS", "Framework", "FrameworkNotInstalled", "adapter_for", "framework_of", "framework_for_module"]


class FrameworkNotInstalled(GoldfiveError, ImportError):
    """An agent of a framework whose optional extra is not installed."""


@dataclass(frozen=True)
class Framework:
    #: The name people know it by ("PydanticAI").
    name: str
    #: The pip extra that installs it with goldfive: ``pip install 'goldfive[EXTRA]'``.
    extra: str
    #: Top-level modules whose classes belong to the framework (``type(obj).__module__``).
    modules: tuple[str, ...]
    #: ``module:Class`` of the goldfive adapter; constructed as ``Class(obj)``.
    adapter: str

    def install_hint(self) -> str:
        return f"pip install 'goldfive[{self.extra}]'"

    def owns_module(self, module: str) -> bool:
        return any(module == m or module.startswith(m + ".") for m in self.modules)


FRAMEWORKS: tuple[Framework, ...] = (
    Framework("PydanticAI", "pydantic-ai", ("pydantic_ai",), "goldfive.adapters.pydantic_ai:PydanticAIAdapter"),
    Framework("the OpenAI Agents SDK", "openai-agents", ("agents",), "goldfive.adapters.openai_agents:OpenAIAgentsAdapter"),
    Framework("Google ADK", "adk", ("google.adk",), "goldfive.adapters.adk:ADKAdapter"),
    Framework("LangGraph", "langgraph", ("langgraph",), "goldfive.adapters.langgraph:LangGraphAdapter"),
    Framework("the Claude Agent SDK", "claude-agent-sdk", ("claude_agent_sdk",), "goldfive.adapters.claude_agent_sdk:ClaudeAgentSDKAdapter"),
)


def framework_of(obj: Any) -> Framework | None:
    """The framework ``obj`` belongs to, from the modules of its class and base classes."""
    cls = obj if inspect.isclass(obj) else type(obj)
    for klass in getattr(cls, "__mro__", (cls,)):
        module = getattr(klass, "__module__", "") or ""
        for fw in FRAMEWORKS:
            if fw.owns_module(module):
                return fw
    return None


def framework_for_module(missing: str) -> Framework | None:
    """The framework a missing module belongs to (for "No module named 'pydantic_ai'")."""
    for fw in FRAMEWORKS:
        if fw.owns_module(missing) or any(m.startswith(missing + ".") for m in fw.modules):
            return fw
    return None


def _is_adapter(obj: Any) -> bool:
    return hasattr(obj, "invoke") and hasattr(obj, "available_agents")


def adapter_for(agent: Any) -> Any:
    """An AgentAdapter for ``agent``: itself if it is one, the framework's adapter for a
    framework object, a CallableAdapter for an async function; TypeError otherwise."""
    if _is_adapter(agent):
        return agent
    fw = framework_of(agent)
    if fw is not None:
        module_name, _, cls_name = fw.adapter.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise FrameworkNotInstalled(
                f"{type(agent).__name__} is a {fw.name} agent but goldfive's {fw.name} adapter cannot be imported "
                f"({exc}); install it with: {fw.install_hint()}"
            ) from None
        return getattr(module, cls_name)(agent)
    if callable(agent):
        from goldfive.adapters.callable import CallableAdapter

        return CallableAdapter(agent)
    raise TypeError(
        "agent must be an AgentAdapter, an async function (task, session), or an agent of "
        f"{', '.join(fw.name for fw in FRAMEWORKS)}; got {type(agent).__name__}"
    )
