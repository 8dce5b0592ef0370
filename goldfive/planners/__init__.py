"""Planners and goal derivers: static ones that need no model, and ones backed by a model."""

from goldfive.planners.goals import LLMGoalDeriver
from goldfive.planners.llm import LLMPlanner
from goldfive.planners.static import PassthroughPlanner, StaticPlanner

__all__ = ["LLMGoalDeriver", "LLMPlanner", "PassthroughPlanner", "StaticPlanner"]
