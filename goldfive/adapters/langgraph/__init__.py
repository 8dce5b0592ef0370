"""The LangGraph adapter: a goldfive task is one run of a compiled graph (LangGraph, or a
LangChain v1 ``create_agent`` agent). Install with ``pip install 'goldfive[langgraph]'``; the
core never imports this package.

- ``adapter``: :class:`LangGraphAdapter` (threads, streaming, answering interrupts);
- ``requests``: the interrupt shapes understood and how each is answered;
- ``tools``: what a graph is built with to report progress and read injected messages;
- ``middleware``: the same for ``create_agent`` (imported on its own: it needs ``langchain``).
"""

from goldfive.adapters.langgraph.adapter import FRAMEWORK, LangGraphAdapter
from goldfive.adapters.langgraph.tools import ask_first, goldfive_pre_model_hook, goldfive_tools, injected_messages

__all__ = ["FRAMEWORK", "LangGraphAdapter", "ask_first", "goldfive_pre_model_hook", "goldfive_tools", "injected_messages"]
