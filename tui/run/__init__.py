"""The run screen: one run, live or replayed, with its controls on or off."""

from .screen import Opener, RunScreen, replay_screen

__all__ = ["Opener", "RunScreen", "replay_screen"]
