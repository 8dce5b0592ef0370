"""The module path goldfive v1 documents for the planners (``from goldfive.planner import StaticPlanner``).

They live in :mod:`goldfive.planners`; this module only re-exports them.
"""

from goldfive.planners import LLMPlanner, PassthroughPlanner, StaticPlanner

__all__ = ["LLMPlanner", "PassthroughPlanner", "StaticPlanner"]
