"""Timeline: a recorded run's RunState as of any event, cheaply, for stepping through a replay.

A checkpoint (a deep copy of the state) is kept every ``every`` events, so the state as of
event ``n`` costs one copy plus at most ``every - 1`` applies, whichever way the cursor moved.
"""

from __future__ import annotations

import copy
from typing import Sequence

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.view import RunState

__all__ = ["Timeline"]

CHECKPOINT_EVERY = 1000


class Timeline:
    def __init__(self, events: Sequence[Event], *, every: int = CHECKPOINT_EVERY) -> None:
        if every < 1:
            raise ValueError(f"checkpoint interval must be >= 1, got {every}")
        self.events = events
        self.every = every
        # _checkpoints[i] is the state after i * every events; never handed out uncopied.
        self._checkpoints: list[RunState] = [RunState()]
        state = RunState()
        for n, ev in enumerate(events, 1):
            state.apply(ev)
            if n % every == 0:
                self._checkpoints.append(copy.deepcopy(state))
        self.final = state

    def __len__(self) -> int:
        return len(self.events)

    @property
    def checkpoints(self) -> int:
        return len(self._checkpoints)

    def state_at(self, n: int) -> RunState:
        """A fresh RunState with the first ``n`` events applied (0 <= n <= len)."""
        if not 0 <= n <= len(self.events):
            raise IndexError(f"event position {n} is outside 0..{len(self.events)}")
        base = min(n // self.every, len(self._checkpoints) - 1)
        state = copy.deepcopy(self._checkpoints[base])
        for ev in self.events[base * self.every : n]:
            state.apply(ev)
        return state
