"""What the parts of a run see of it: the ``Run`` protocol, typed by shape.

``RunContext`` (``goldfive.run.context``) holds the parts of a run: its ``ControlLoop``, the
handler table, the approval waits, the reporting and user tools. Each part is handed the run
and uses some of it; they name what they use here, not ``RunContext``, so RunContext imports
its parts and none of them imports it back: the run has no import circle
(``tests/test_import_circles.py``). ``RunContext`` is a ``Run``; mypy checks that where it hands
itself to a part.

This module imports nothing of the run but its leaves (the config, the injected messages, the
outcome of a control, a tool's spec).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.approvals.desk import ApprovalDesk
    from goldfive.budget.guard import BudgetGuard
    from goldfive.control import ControlChannel, ControlMessage
    from goldfive.controls.payloads import Control, Steer
    from goldfive.pb.goldfive.v1.events_pb2 import Event
    from goldfive.protocols import AgentAdapter, Planner, Steerer
    from goldfive.run.config import RuntimeConfig
    from goldfive.run.messages import InjectedMessages
    from goldfive.run.outcome import ControlOutcome
    from goldfive.run.tool_spec import ReportingToolSpec
    from goldfive.types import DriftEvent, Session

__all__ = ["PauseState", "Run", "RunControls", "ToolBinder"]


class PauseState(StrEnum):
    RUNNING = "RUNNING"
    #: A PAUSE was acked while a task runs: no new task starts, the running one finishes.
    PAUSING = "PAUSING"
    PAUSED = "PAUSED"


class RunControls(Protocol):
    """What the parts use of the run's ``ControlLoop`` (``run.controls``)."""

    #: What the run is busy with outside a task ("planning", "replanning"), "" otherwise.
    @property
    def busy_with(self) -> str: ...

    def usable(self) -> bool: ...

    async def handle(self, msg: ControlMessage, *, mid_task: bool, from_ladder: bool = False) -> ControlOutcome: ...

    async def apply_steer(self, steer: Control[Steer], interrupted: list[str]) -> bool: ...


class ToolBinder(Protocol):
    """A tool of the user's own (``goldfive.run.user_tools.UserTool``), bound to a turn."""

    @property
    def name(self) -> str: ...

    def bind(self, ctx: Run, task_id: str) -> ReportingToolSpec: ...


class Run(Protocol):
    """What the parts of a run use of it (``RunContext`` is the one the runtime builds).

    Attributes the parts set are plain attributes; the rest are read-only here."""

    #: monotonic() deadline of an escalation pause; a person's decision clears it.
    pause_deadline: float | None
    #: Whether the agent may hand work to another agent (INTERCEPT_TRANSFER sets it).
    intercept_transfer: bool
    #: The run's approval rules and timeout policy (a rules control may replace it).
    approval_desk: ApprovalDesk
    #: Drifts reported mid-task, taken to the ladder at the next boundary.
    deferred_drifts: list[DriftEvent]
    #: Tasks to reset to PENDING at the next boundary.
    pending_rewinds: list[str]

    @property
    def session(self) -> Session: ...
    @property
    def steerer(self) -> Steerer: ...
    @property
    def planner(self) -> Planner: ...
    @property
    def adapter(self) -> AgentAdapter | None: ...
    @property
    def control(self) -> ControlChannel | None: ...
    @property
    def config(self) -> RuntimeConfig: ...
    @property
    def messages(self) -> InjectedMessages: ...
    @property
    def controls(self) -> RunControls: ...
    @property
    def user_tools(self) -> Sequence[ToolBinder]: ...
    @property
    def budget(self) -> BudgetGuard: ...
    @property
    def paused(self) -> bool: ...
    @property
    def pause_state(self) -> PauseState: ...
    @property
    def recording_error(self) -> str: ...

    async def emit(self, factory: Callable[..., Event], *args: Any, **kwargs: Any) -> Event | None: ...

    def pause(self, deadline_s: float | None = None) -> None: ...

    def unpause(self) -> None: ...

    async def retry_recording(self) -> str:
        """Commit what the durable sinks hold: "" when it worked, else why not."""
        ...
