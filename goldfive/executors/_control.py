"""The module path goldfive v1 documents for the control helpers: a custom ``_handle_custom``
(docs/protocol.md#custom-controls) imports ``ControlOutcome`` and ``dispatch_control`` from
here. They live in ``goldfive.run``.
"""

from __future__ import annotations

from typing import Any

from goldfive.run.control_loop import RunCancelled
from goldfive.run.dispatch import ControlOutcome, dispatch_control
from goldfive.run.context import RunContext

__all__ = ["ControlOutcome", "RunCancelled", "dispatch_control", "drain_controls"]


async def drain_controls(executor: Any, ctx: RunContext) -> list[ControlOutcome]:
    """Handle every control already queued for the run, without waiting."""
    return await ctx.controls.drain()
