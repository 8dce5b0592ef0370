"""``dispatch_control``: the module-level dispatcher an executor's custom-control hook falls
back to (docs/protocol.md#custom-controls).

It finds the run (the one handed in, or the current one) and asks the handler table
(``goldfive.run.handlers.decide``). It sits above both the table and the current run, so the
table imports neither ``RunContext`` nor the context variable that holds it.
``goldfive.run`` and ``goldfive.executors._control`` export it.
"""

from __future__ import annotations

from typing import Any

from goldfive.control import ControlMessage
from goldfive.controls.payloads import Control
from goldfive.errors import GoldfiveError
from goldfive.run.current_run import current_or_none
from goldfive.run.handlers import decide
from goldfive.run.outcome import ControlOutcome
from goldfive.run.parts import Run
from goldfive.types import Session

__all__ = ["ControlOutcome", "dispatch_control"]


async def dispatch_control(
    msg: ControlMessage, *, session: Session, mid_task: bool = False, ctx: Run | None = None,
    control: Control[Any] | None = None, **_: Any,
) -> ControlOutcome:  # fmt: skip
    """The spec's module-level dispatcher (docs/protocol.md#custom-controls): a custom handler falls back to it.
    The ControlLoop passes the run (``ctx``) and the control it already decoded (``control``)."""
    run: Run | None = ctx
    if run is None:
        run = current_or_none()
        if run is None or run.session is not session:
            raise GoldfiveError("dispatch_control: this session has no running goldfive run here")
    if control is None or control.message is not msg:
        return await decide(run, msg, mid_task=mid_task)
    return await decide(run, control, mid_task=mid_task)
