"""One run's life: its context, its control loop, approvals and tools.

``RunContext`` holds every per-run field; ``current()`` is the run the calling code belongs
to (a context variable the runner binds); ``ControlLoop`` is the only reader and acker of the
run's ControlChannel; ``validate_control`` is the one check every boundary imports.
"""

from goldfive.run.config import DEFAULT_LIMITS, ControlLimits, RuntimeConfig
from goldfive.run.context import RunContext
from goldfive.run.current_run import context_of, current, current_or_none, read_injected, running
from goldfive.run.control_loop import ControlLoop, RunCancelled
from goldfive.run.dispatch import ControlOutcome, dispatch_control
from goldfive.run.parts import PauseState, Run
from goldfive.run.validate import LADDER_KINDS, validate_control

__all__ = [
    "DEFAULT_LIMITS",
    "LADDER_KINDS",
    "ControlLimits",
    "ControlLoop",
    "ControlOutcome",
    "PauseState",
    "Run",
    "RunCancelled",
    "RunContext",
    "RuntimeConfig",
    "context_of",
    "current",
    "current_or_none",
    "dispatch_control",
    "read_injected",
    "running",
    "validate_control",
]
