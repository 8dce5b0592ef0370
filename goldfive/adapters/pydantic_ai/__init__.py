"""Steer a PydanticAI agent: ``PydanticAIAdapter(agent)`` (extra ``goldfive[pydantic-ai]``)."""

from goldfive.adapters.pydantic_ai.adapter import PydanticAIAdapter

__all__ = ["PydanticAIAdapter"]
