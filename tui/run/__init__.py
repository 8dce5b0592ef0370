"""The run screen: one run, live or replayed, with its controls on or off."""

from .screen import Opener, RunScreen

__all__ = ["Opener", "RunScreen"]
