"""Injected messages: park a user's mid-turn message on the running turn (docs/protocol.md#inject_message).

``Inbox`` is the lane-level primitive (Begin / Park / Drain and the close handoff);
``render`` wraps a message whole in the steering tags. The run (``goldfive.run.messages``)
adds events and the carry-over to the next turn on top.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Callable

OPEN_TAG = "[user_steering]"
CLOSE_TAG = "[/user_steering]"


@dataclass(frozen=True)
class InjectedMessage:
    text: str
    role: str = "user"
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    control_id: str = ""


def render(message: InjectedMessage) -> str:
    """The whole text inside the steering block; an empty text still gets an empty block."""
    return f"{OPEN_TAG}{message.text}{CLOSE_TAG}"


class Inbox:
    """Messages parked for turns that are running, keyed by lane (one running turn per lane).

    ``park`` checks "is the lane running" and appends under one lock, so True is a promise:
    the message will come out of a ``drain`` or of the close func that ``begin`` returned.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lanes: dict[str, list[InjectedMessage]] = {}

    def begin(self, lane: str) -> Callable[[], list[InjectedMessage]]:
        """Mark ``lane`` running; the returned close func ends it and hands back what was
        parked but never drained. The caller must re-submit those as an ordinary turn."""
        if not lane:
            return lambda: []
        with self._lock:
            self._lanes.setdefault(lane, [])

        def close() -> list[InjectedMessage]:
            with self._lock:
                return self._lanes.pop(lane, [])

        return close

    def open(self, lane: str) -> None:
        """``begin`` without a close func (the executor's per-task path): ``end(lane)`` ends it."""
        if lane:
            with self._lock:
                self._lanes.setdefault(lane, [])

    def end(self, lane: str) -> list[InjectedMessage]:
        """End the turn on ``lane``; what was parked and never drained is handed back."""
        with self._lock:
            return self._lanes.pop(lane, [])

    def park(self, lane: str, message: InjectedMessage) -> bool:
        """Queue ``message`` for the turn running on ``lane``; False if none is running."""
        with self._lock:
            queue = self._lanes.get(lane)
            if queue is None:
                return False
            queue.append(message)
            return True

    def drain(self, lane: str) -> list[InjectedMessage]:
        """Remove and return what was parked on ``lane`` since the last drain."""
        with self._lock:
            queue = self._lanes.get(lane)
            if not queue:
                return []
            out = list(queue)
            queue.clear()
            return out

    def running(self) -> list[str]:
        with self._lock:
            return list(self._lanes)
