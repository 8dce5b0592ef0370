"""Agent adapters: the only code that knows a specific agent framework."""

from goldfive.adapters.callable import CallableAdapter
from goldfive.adapters.llm_agent import LLMAgentAdapter

__all__ = ["CallableAdapter", "LLMAgentAdapter"]
