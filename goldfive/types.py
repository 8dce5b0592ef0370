"""Core value types: goals, tasks, plans, statuses, drift kinds and the live Session."""

from __future__ import annotations

import asyncio
import copy
import secrets
import time
import warnings
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Iterator

from goldfive.errors import PlanValidationError, UnknownTaskError
from goldfive.ids import random_hex
from goldfive.sequence import sequence_counter

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.plan_tally import PlanTally


class TaskStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    BLOCKED = "BLOCKED"
    NOT_NEEDED = "NOT_NEEDED"

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL = frozenset(
    {TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.NOT_NEEDED}
)


class DriftSeverity(StrEnum):
    INFO = "INFO"
    WARNING = "WARNING"
    CRITICAL = "CRITICAL"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    def __ge__(self, other: object) -> bool:
        if isinstance(other, DriftSeverity):
            return _SEVERITY_RANK[self] >= _SEVERITY_RANK[other]
        return NotImplemented

    def __gt__(self, other: object) -> bool:
        if isinstance(other, DriftSeverity):
            return _SEVERITY_RANK[self] > _SEVERITY_RANK[other]
        return NotImplemented

    def __le__(self, other: object) -> bool:
        if isinstance(other, DriftSeverity):
            return _SEVERITY_RANK[self] <= _SEVERITY_RANK[other]
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if isinstance(other, DriftSeverity):
            return _SEVERITY_RANK[self] < _SEVERITY_RANK[other]
        return NotImplemented


_SEVERITY_RANK = {DriftSeverity.INFO: 1, DriftSeverity.WARNING: 2, DriftSeverity.CRITICAL: 3}


class DriftKind(StrEnum):
    TOOL_ERROR = "TOOL_ERROR"
    AGENT_REFUSAL = "AGENT_REFUSAL"
    NEW_WORK_DISCOVERED = "NEW_WORK_DISCOVERED"
    PLAN_DIVERGENCE = "PLAN_DIVERGENCE"
    USER_STEER = "USER_STEER"
    USER_CANCEL = "USER_CANCEL"
    TASK_FAILED_RECOVERABLE = "TASK_FAILED_RECOVERABLE"
    TASK_FAILED_FATAL = "TASK_FAILED_FATAL"
    CONTEXT_PRESSURE = "CONTEXT_PRESSURE"
    BLOCKED = "BLOCKED"
    WRONG_AGENT = "WRONG_AGENT"
    AGENT_TRANSFER = "AGENT_TRANSFER"
    MODEL_REFUSAL = "MODEL_REFUSAL"
    STOPPED_EARLY = "STOPPED_EARLY"
    TOO_MANY_STEPS = "TOO_MANY_STEPS"
    GOAL_UNREACHABLE = "GOAL_UNREACHABLE"
    TASK_TIMEOUT = "TASK_TIMEOUT"
    REPEATED_FAILURE = "REPEATED_FAILURE"
    UNEXPECTED_OUTPUT = "UNEXPECTED_OUTPUT"
    SCHEMA_VIOLATION = "SCHEMA_VIOLATION"
    HALLUCINATION_SUSPECTED = "HALLUCINATION_SUSPECTED"
    SAFETY_CONCERN = "SAFETY_CONCERN"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    AMBIGUOUS_INTENT = "AMBIGUOUS_INTENT"
    CUSTOM = "CUSTOM"
    LOOPING_TOOL_CALL = "LOOPING_TOOL_CALL"
    LOOPING_REASONING = "LOOPING_REASONING"
    CONFUSION = "CONFUSION"
    OFF_TOPIC = "OFF_TOPIC"
    INTENT_DIVERGENCE = "INTENT_DIVERGENCE"
    UNCERTAIN_PROGRESS = "UNCERTAIN_PROGRESS"
    SELF_REPORTED_STUCK = "SELF_REPORTED_STUCK"
    REASONING_CLUSTER_TIGHTENING = "REASONING_CLUSTER_TIGHTENING"
    CONFABULATION_RISK = "CONFABULATION_RISK"
    RUNAWAY_DELEGATION = "RUNAWAY_DELEGATION"
    REFINE_VALIDATION_FAILED = "REFINE_VALIDATION_FAILED"
    HUMAN_INTERVENTION_REQUIRED = "HUMAN_INTERVENTION_REQUIRED"
    GOAL_DRIFT = "GOAL_DRIFT"
    USER_PAUSE = "USER_PAUSE"


@dataclass(frozen=True)
class Goal:
    id: str
    summary: str
    metadata: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    success_predicate: Callable[["Session"], bool] | None = field(
        default=None, compare=False, hash=False, repr=False
    )


@dataclass(frozen=True)
class TaskEdge:
    from_task_id: str
    to_task_id: str


@dataclass
class Task:
    """One unit of work. ``status`` is the one field that changes after creation, and only
    through the steerer's state machine (``set_task_status``); the other fields are set once."""

    id: str
    title: str
    description: str = ""
    assignee_agent_id: str = ""
    status: TaskStatus = TaskStatus.PENDING
    predicted_start_ms: int = 0
    predicted_duration_ms: int = 0
    #: How many times this task has started in its run, this time included (1 on the first
    #: run; more after a rewind, or when a resumed run starts again a task the crash cut off).
    attempt: int = field(default=0, compare=False)
    #: (the tally of the plan counting this task, its index there), set on the task itself by
    #: ``goldfive.plan_tally`` once a plan's statuses are counted (not a field: not compared,
    #: copied by ``replace`` or shown).
    _tally: ClassVar[tuple[PlanTally, int] | None] = None


def set_task_status(task: Task, status: TaskStatus) -> None:
    """The single writer of Task.status (the steerer's state machine inlines it). Callers
    other than the steerer should not use it; it keeps the plan's status counts
    (``goldfive.plan_tally``) when they are kept."""
    entry = task._tally
    if entry is not None:
        entry[0].moved(entry[1], task, status)
    task.status = status


@dataclass(frozen=True)
class Plan:
    tasks: tuple[Task, ...] | list[Task]
    edges: tuple[TaskEdge, ...] | list[TaskEdge] = ()
    id: str = ""
    run_id: str = ""
    goal_ids: tuple[str, ...] | list[str] = ()
    summary: str = ""
    revision_reason: str = ""
    revision_kind: str = ""
    revision_severity: str = ""
    revision_index: int = 0
    _by_id: dict[str, Task] = field(init=False, repr=False, compare=False, hash=False)
    _succ: dict[str, list[str]] = field(init=False, repr=False, compare=False, hash=False)
    _pred: dict[str, list[str]] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", tuple(self.tasks))
        object.__setattr__(self, "edges", tuple(self.edges))
        object.__setattr__(self, "goal_ids", tuple(self.goal_ids))
        by_id: dict[str, Task] = {}
        for t in self.tasks:
            by_id.setdefault(t.id, t)
        succ: dict[str, list[str]] = {t.id: [] for t in self.tasks}
        pred: dict[str, list[str]] = {t.id: [] for t in self.tasks}
        for e in self.edges:
            succ.setdefault(e.from_task_id, []).append(e.to_task_id)
            pred.setdefault(e.to_task_id, []).append(e.from_task_id)
        object.__setattr__(self, "_by_id", by_id)
        object.__setattr__(self, "_succ", succ)
        object.__setattr__(self, "_pred", pred)

    def for_run(self, run_id: str) -> "Plan":
        """The same plan (the same Task objects) stamped with ``run_id``. Its indexes are
        shared, not rebuilt: ``dataclasses.replace`` would run ``__post_init__`` again, three
        dicts over every task of a plan that is already built and valid."""
        new = copy.copy(self)
        object.__setattr__(new, "run_id", run_id)
        return new

    def fresh_copy(self, *, goal_ids: Iterable[str] | None = None) -> "Plan":
        """The same plan with new Task objects (statuses copied), for one run to move on.

        The edge structure is shared, and a plan found valid stays valid: copying a 100k-task
        plan costs one pass over its tasks, not a rebuild and a second validation."""
        new = copy.copy(self)
        tasks = tuple(
            Task(t.id, t.title, t.description, t.assignee_agent_id, t.status, t.predicted_start_ms, t.predicted_duration_ms)
            for t in self.tasks
        )
        by_id: dict[str, Task] = {}
        for t in tasks:
            by_id.setdefault(t.id, t)
        object.__setattr__(new, "tasks", tasks)
        object.__setattr__(new, "_by_id", by_id)
        if goal_ids is not None:
            object.__setattr__(new, "goal_ids", tuple(goal_ids))
        return new

    # -- lookups ---------------------------------------------------------------
    def task(self, task_id: str) -> Task:
        try:
            return self._by_id[task_id]
        except KeyError:
            raise UnknownTaskError(f"unknown task id: {task_id!r}") from None

    def has_task(self, task_id: str) -> bool:
        return task_id in self._by_id

    def predecessors(self, task_id: str) -> list[str]:
        return self._pred.get(task_id, [])

    def successors(self, task_id: str) -> list[str]:
        return self._succ.get(task_id, [])

    def downstream(self, task_id: str) -> list[str]:
        """Every task reachable from ``task_id`` along edges, excluding itself, in BFS order."""
        seen = {task_id}
        order: list[str] = []
        frontier = [task_id]
        while frontier:
            nxt: list[str] = []
            for tid in frontier:
                for s in self._succ.get(tid, ()):
                    if s not in seen:
                        seen.add(s)
                        order.append(s)
                        nxt.append(s)
            frontier = nxt
        return order

    def is_ready(self, task_id: str) -> bool:
        """PENDING with every predecessor COMPLETED. An unknown id raises UnknownTaskError."""
        t = self.task(task_id)
        if t.status != TaskStatus.PENDING:
            return False
        return all(self._by_id[p].status == TaskStatus.COMPLETED for p in self._pred.get(task_id, ()))

    def topological_order(self) -> list[Task]:
        """Tasks in a dependency-respecting order, stable with respect to plan order.

        A validated plan keeps the order ``validate`` found (its ids: a ``fresh_copy`` shares
        them with the original and reads its own Task objects)."""
        by_id = self._by_id
        order = self.__dict__.get("_topo")
        if order is None:
            return [by_id[tid] for tid in self._kahn()]
        return [by_id[tid] for tid in order]

    def _kahn(self) -> list[str]:
        """Kahn's algorithm: the task ids in topological order (FIFO, so stable to plan order);
        the tasks on or behind a cycle are missing from it."""
        indeg = {t.id: 0 for t in self.tasks}
        for e in self.edges:
            if e.to_task_id in indeg and e.from_task_id in indeg:
                indeg[e.to_task_id] += 1
        ready = [tid for tid, n in indeg.items() if n == 0]
        succ = self._succ
        i = 0
        while i < len(ready):
            tid = ready[i]
            i += 1
            for s in succ.get(tid, ()):
                if s in indeg:
                    indeg[s] = left = indeg[s] - 1
                    if left == 0:
                        ready.append(s)
        return ready

    def counts(self) -> dict[TaskStatus, int]:
        c = {s: 0 for s in TaskStatus}
        for t in self.tasks:
            c[t.status] += 1
        return c

    # -- validation ------------------------------------------------------------
    def validate(self) -> "Plan":
        """Raise PlanValidationError naming the rule and the ids; return self when valid.

        The checks are structural (ids, edges, cycles) and a Plan's structure never changes,
        so a plan found valid once is not walked again."""
        if self.__dict__.get("_valid"):
            return self
        if not self.tasks:
            raise PlanValidationError("plan has no tasks")
        empty = [str(i) for i, t in enumerate(self.tasks) if not t.id or not t.id.strip()]
        if empty:
            raise PlanValidationError("empty task id at position", empty)
        seen: set[str] = set()
        dups: list[str] = []
        for t in self.tasks:
            if t.id in seen and t.id not in dups:
                dups.append(t.id)
            seen.add(t.id)
        if dups:
            raise PlanValidationError("duplicate task id", dups)
        unknown = [
            f"{e.from_task_id}->{e.to_task_id}"
            for e in self.edges
            if e.from_task_id not in seen or e.to_task_id not in seen
        ]
        if unknown:
            raise PlanValidationError("edge to unknown task", unknown)
        selfloops = [e.from_task_id for e in self.edges if e.from_task_id == e.to_task_id]
        if selfloops:
            raise PlanValidationError("cycle", selfloops, f"cycle: {selfloops[0]} -> {selfloops[0]}")
        # One pass finds the order and whether there is a cycle; only a plan that has one is
        # walked again, to name it.
        order = self._kahn()
        if len(order) < len(self.tasks):
            cycle = _find_cycle(self)
            raise PlanValidationError("cycle", cycle, "cycle: " + " -> ".join(cycle + [cycle[0]]))
        object.__setattr__(self, "_topo", tuple(order))
        object.__setattr__(self, "_valid", True)
        return self


def _find_cycle(plan: Plan) -> list[str]:
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {t.id: WHITE for t in plan.tasks}
    for root in colour:
        if colour[root] != WHITE:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(plan.successors(root)))]
        path = [root]
        colour[root] = GREY
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = BLACK
                stack.pop()
                path.pop()
                continue
            if colour.get(nxt) == GREY:
                return path[path.index(nxt):]
            if colour.get(nxt) == WHITE:
                colour[nxt] = GREY
                path.append(nxt)
                stack.append((nxt, iter(plan.successors(nxt))))
    return []


@dataclass(frozen=True)
class DriftEvidence:
    """One thing a drift detector saw (the watchdog's repeated calls, with their times)."""

    at_ms: int
    #: "tool_call", "model_output", "progress" or "task_started".
    what: str
    tool_name: str = ""
    call_id: str = ""
    args_json: str = ""
    text: str = ""
    sequence: int = 0


@dataclass(frozen=True)
class DriftEvent:
    kind: DriftKind
    severity: DriftSeverity
    detail: str = ""
    task_id: str = ""
    annotation_id: str = ""
    id: str = field(default_factory=lambda: random_hex()[:16])  # secrets.token_hex(8)'s form, from a batch
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: What the detector saw, oldest first (DriftDetected.evidence on the wire).
    evidence: tuple[DriftEvidence, ...] = field(default=(), compare=False)


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def _no_run() -> Any:
    return None


#: How the deprecated ``Session.context`` finds the running run (goldfive.run.current_run
#: registers its lookup when it loads), so the value types import nothing of the run.
_current_run: Callable[[], Any] = _no_run


def _register_current_run(lookup: Callable[[], Any]) -> None:
    global _current_run
    _current_run = lookup


@dataclass(eq=False)
class Session:
    """All live state of one run. Only goldfive's runtime mutates it."""

    run_id: str
    session_id: str = ""
    goals: list[Goal] = field(default_factory=list)
    plan: Plan | None = None
    completed_results: dict[str, str] = field(default_factory=dict)
    task_progress: dict[str, list[str]] = field(default_factory=dict)
    pending_approvals: dict[str, asyncio.Event] = field(default_factory=dict)
    pending_approvals_meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    agent_notes: dict[str, Any] = field(default_factory=dict)
    current_task_id: str = ""
    user_input: str = ""
    #: Milliseconds since the epoch; injectable so tests and snapshots are deterministic.
    clock: Callable[[], int] = field(default=_wall_ms, repr=False)
    _counter: Iterator[int] = field(default_factory=sequence_counter, repr=False)
    # Drawn once: the sequence already tells this session's events apart, and the suffix tells
    # this session from any other that shares its run_id (a rerun, another process).
    _id_suffix: str = field(default_factory=lambda: secrets.token_hex(4), repr=False)

    def __post_init__(self) -> None:
        if not self.session_id:
            self.session_id = self.run_id

    @property
    def context(self) -> Any:
        """Deprecated: the run this session belongs to, when the calling code runs inside it
        (else None). Use ``goldfive.run.current()``: the run is a context variable now, not a
        field of the session."""
        warnings.warn(
            "Session.context is deprecated: use goldfive.run.current() (the run of the calling task)",
            DeprecationWarning,
            stacklevel=2,
        )
        run = _current_run()
        return run if run is not None and getattr(run, "session", None) is self else None

    def next_sequence(self) -> int:
        """Gap-free from 0, unique under concurrent callers (threads included)."""
        return next(self._counter)

    def continue_after(self, last_sequence: int) -> None:
        """A resumed run's sequences go on from its recording's last one, gap-free."""
        self._counter = sequence_counter(last_sequence + 1)

    @property
    def last_sequence(self) -> int:
        """The last sequence handed out, -1 before the first."""
        # A count's repr is "count(<next value>)": the only way to read it without drawing.
        return int(repr(self._counter)[6:-1]) - 1

    def event_id(self, sequence: int) -> str:
        """``run_id:sequence:suffix``, the suffix 8 hex digits drawn once per session."""
        return f"{self.run_id}:{sequence}:{self._id_suffix}"
