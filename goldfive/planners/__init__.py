"""Planners and goal derivers backed by a model."""

from goldfive.planners.goals import LLMGoalDeriver
from goldfive.planners.llm import LLMPlanner

__all__ = ["LLMGoalDeriver", "LLMPlanner"]
