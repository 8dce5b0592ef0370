"""Agent adapters: the only code that knows a specific agent framework."""

from goldfive.adapters.callable import CallableAdapter

__all__ = ["CallableAdapter"]
