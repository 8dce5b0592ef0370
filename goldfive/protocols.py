"""The six primitives as Protocols. Any class with these methods can be swapped in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.results import InvocationResult
from goldfive.types import DriftEvent, Goal, Plan, Session, Task

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.control import ControlChannel


@runtime_checkable
class EventSink(Protocol):
    """Receives every event of a run, in sequence order. Side effects only."""

    async def emit(self, event: Event) -> None: ...

    async def close(self) -> None: ...


@runtime_checkable
class GoalDeriver(Protocol):
    async def derive(self, user_input: str, *, context: dict[str, Any] | None = None) -> list[Goal]: ...


@runtime_checkable
class Planner(Protocol):
    """The runtime calls these with exactly these keywords."""

    async def generate(
        self, *, goals: list[Goal], available_agents: list[str], context: dict[str, Any] | None = None
    ) -> Plan | None: ...

    async def refine(self, *, plan: Plan, drift: DriftEvent, goals: list[Goal]) -> Plan | None: ...


def can_replan(planner: Any) -> bool:
    """Planners say ``can_replan = False`` when refine can never return a plan."""
    return bool(getattr(planner, "can_replan", True))


@runtime_checkable
class AgentAdapter(Protocol):
    """Wraps an agent. ``invoke`` runs one task; reporting tools are on ``session.tools``."""

    @property
    def available_agents(self) -> list[str]: ...

    async def invoke(self, task: Task, session: Session) -> InvocationResult: ...


@runtime_checkable
class Steerer(Protocol):
    async def observe(self, msg: Any, session: Session) -> DriftEvent | None: ...


@runtime_checkable
class Executor(Protocol):
    async def run(
        self,
        *,
        plan: Plan,
        session: Session,
        adapter: AgentAdapter,
        steerer: Any,
        planner: Planner,
        sinks: list[EventSink],
        control: "ControlChannel | None" = None,
    ) -> Any: ...
