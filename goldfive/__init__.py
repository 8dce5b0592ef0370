"""goldfive: wrap an agent with an explicit plan, a task state machine, drift detection
and live steering."""

from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.errors import GoldfiveError
from goldfive.results import ExecutionOutcome, InvocationResult
from goldfive.types import (
    DriftEvent,
    DriftKind,
    DriftSeverity,
    Goal,
    Plan,
    Session,
    Task,
    TaskEdge,
    TaskStatus,
)

__version__ = "0.1.0"

__all__ = sorted(
    [
        "AckResult",
        "ControlAck",
        "ControlChannel",
        "ControlKind",
        "ControlMessage",
        "DriftEvent",
        "DriftKind",
        "DriftSeverity",
        "ExecutionOutcome",
        "Goal",
        "GoldfiveError",
        "InvocationResult",
        "Plan",
        "Session",
        "Task",
        "TaskEdge",
        "TaskStatus",
        "__version__",
    ]
)
