"""Waiting in a Pilot test: the one polling helper the UI tests share.

``goldfive.testing.until`` waits in a plain event loop; here each step is ``pilot.pause`` so the
app handles its messages and repaints between two looks, as a person's screen would.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from textual.pilot import Pilot


async def pilot_until(pilot: Pilot[Any], what: str, check: Callable[[], Any], *, timeout: float = 10.0, step: float = 0.01) -> Any:
    """Pause the app until ``check()`` is truthy and return it; AssertionError naming ``what``
    and the screen on top after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for: {what} (screen: {pilot.app.screen!r})")
        await pilot.pause(step)
