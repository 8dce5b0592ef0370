"""The six primitives as Protocols: each declares every method the runtime calls on it, with
the arguments it passes. Any class with these methods can be swapped in; subclassing the
shipped implementation (``DefaultSteerer``, ``ExecutorBase``...) is the short way to get the
ones you do not want to change.

Optional parts the runtime looks for, beyond the methods below, are named in each docstring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.results import ExecutionOutcome, InvocationResult
from goldfive.types import DriftEvent, Goal, Plan, Session, Task, TaskStatus

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.control import ControlChannel, ControlMessage
    from goldfive.controls.payloads import Control
    from goldfive.ladder import DriftOutcome

__all__ = ["AgentAdapter", "EventSink", "Executor", "GoalDeriver", "Planner", "Steerer", "move_task"]


@runtime_checkable
class EventSink(Protocol):
    """Receives every event of a run, in sequence order. Side effects only.

    Optional: ``async sync()`` (a durable recorder: called at each state change of the run,
    which waits for it) and ``subscribe()`` (a sink people watch: shown a resumed run's
    recorded history first)."""

    async def emit(self, event: Event) -> None: ...

    async def close(self) -> None: ...


@runtime_checkable
class GoalDeriver(Protocol):
    """Called once per run: ``derive(user_input, context={"run_id": ...})``."""

    async def derive(self, user_input: str, *, context: dict[str, Any] | None = None) -> list[Goal]: ...


@runtime_checkable
class Planner(Protocol):
    """The runtime calls these with exactly these keywords.

    Optional attributes: ``can_replan`` (False: ``refine`` never returns a plan, so drifts are
    only observed), ``last_error`` (why the last ``refine`` returned None), ``fixed_plan`` (a
    plan that never changes: ``goldfive resume`` checks it against the recording) and
    ``call_llm`` / ``model`` (what the approvals reviewer asks when it names no model of its own)."""

    async def generate(
        self, *, goals: list[Goal], available_agents: list[str], context: dict[str, Any] | None = None
    ) -> Plan | None: ...

    async def refine(self, *, plan: Plan, drift: DriftEvent, goals: list[Goal]) -> Plan | None: ...


def can_replan(planner: Any) -> bool:
    """Planners say ``can_replan = False`` when refine can never return a plan."""
    return bool(getattr(planner, "can_replan", True))


@runtime_checkable
class AgentAdapter(Protocol):
    """Wraps an agent. ``invoke`` runs one task; reporting tools are on ``session.tools``.

    Optional: ``user_tools`` (tools of the user's own, offered beside the reporting tools) and
    ``supports_intercept_transfer`` (True: INTERCEPT_TRANSFER applies, the agent hands work to
    other agents; otherwise the control is answered UNSUPPORTED)."""

    @property
    def available_agents(self) -> list[str]: ...

    async def invoke(self, task: Task, session: Session) -> InvocationResult: ...


@runtime_checkable
class Steerer(Protocol):
    """The task state machine and the response to drift; ``DefaultSteerer`` is the shipped one.

    ``transition`` has goldfive v1's signature, and the runtime calls it the way v1 did
    (``transition(task_id, to, session=session)``, with ``detail=`` when there is one: a
    completed task's result, any other status's reason), so a v1 steerer's override works.
    Its return value is not relied on (v1's returned None): the runtime reads the task's
    status from the plan."""

    async def transition(
        self, task_id: str, to: TaskStatus, *, session: Session, detail: str = "", cancel_reason: str = ""
    ) -> bool | None: ...

    async def mark_task_blocked(self, session: Session, task_id: str, blocker: str) -> bool: ...

    async def cascade_cancel_downstream(self, session: Session, task_id: str, reason: str) -> list[str]: ...

    async def rewind(self, session: Session, task_id: str) -> list[str]:
        """REWIND_TO: ``task_id`` and everything downstream back to PENDING."""
        ...

    async def unstart(self, session: Session, task_id: str) -> bool:
        """Take back the start of ``task_id`` before its agent ran (its start could not be
        recorded: RUNNING back to PENDING, the attempt given back); False when it is not RUNNING."""
        ...

    async def observe(self, msg: Control[Any] | ControlMessage, session: Session) -> DriftEvent | None:
        """The drift a person's control stands for (STEER, PAUSE, CANCEL), or None. The run
        hands its controls decoded (a ``Control``); the spec's callers hand a ControlMessage."""
        ...

    async def report_drift(self, session: Session, drift: DriftEvent) -> None:
        """Record a drift; one that calls for an intervention is handled at the next boundary."""
        ...

    async def handle_drift(self, session: Session, drift: DriftEvent, *, emit: bool = True) -> DriftOutcome:
        """Act on a drift (the intervention ladder) at a task boundary."""
        ...


@runtime_checkable
class Executor(Protocol):
    """A user's executor: called once per run with these keywords; the run's context is on
    ``session.context``. (The shipped executors derive from ``ExecutorBase``, which the Runner
    drives through ``run(ctx)`` instead.)"""

    async def run(
        self,
        *,
        plan: Plan,
        session: Session,
        adapter: AgentAdapter,
        steerer: Steerer,
        planner: Planner,
        sinks: list[EventSink],
        control: ControlChannel | None = None,
    ) -> ExecutionOutcome: ...


#: ``transition`` functions known to return exactly "the status changed" (DefaultSteerer's,
#: registered by goldfive.steerer): ``move_task`` trusts their answer instead of reading the
#: task's status before and after.
EXACT_TRANSITIONS: set[Any] = set()


async def move_task(steerer: Steerer, session: Session, task_id: str, to: TaskStatus, detail: str = "") -> bool:
    """``steerer.transition`` as the runtime calls it, and whether the task's status changed,
    read from the plan (so a steerer whose ``transition`` returns None is answered right)."""
    if getattr(type(steerer), "transition", None) in EXACT_TRANSITIONS:
        if detail:
            return bool(await steerer.transition(task_id, to, session=session, detail=detail))
        return bool(await steerer.transition(task_id, to, session=session))
    before = _status(session, task_id)
    if detail:
        await steerer.transition(task_id, to, session=session, detail=detail)
    else:
        await steerer.transition(task_id, to, session=session)
    return _status(session, task_id) != before


def _status(session: Session, task_id: str) -> TaskStatus | None:
    plan = session.plan
    return plan.task(task_id).status if plan is not None and plan.has_task(task_id) else None
