"""What a run and an agent invocation return."""

from __future__ import annotations

from dataclasses import dataclass

from goldfive.types import Session


@dataclass(frozen=True)
class InvocationResult:
    """One agent invocation's outcome. ``error`` set means the invocation failed."""

    task_id: str
    text: str = ""
    stop_reason: str = ""
    error: str | None = None


@dataclass(frozen=True)
class ExecutionOutcome:
    success: bool
    session: Session
    reason: str = ""
