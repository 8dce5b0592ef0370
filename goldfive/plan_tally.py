"""How many of a plan's tasks are in each status, kept as the statuses change.

A short task input (``goldfive.adapters.task_prompt.brief_prompt``) says "N tasks: 3 COMPLETED,
1 RUNNING, 96 PENDING" for a long plan, every task; counting the plan each time costs a pass over
it, so a run of N tasks paid N². A :class:`PlanTally` is built once per plan, the first time it is
asked (``status_counts``), and moved by the one writer of ``Task.status``
(``goldfive.types.set_task_status``, which the steerer's state machine inlines): each task points
at its tally, so a status change costs O(log N) and a count O(1) in the plan's size.

The counts come in the order of each status's first task in the plan, as
``collections.Counter(task.status for task in plan.tasks)`` lists them, so the text built from
them is the same. A leaf: it imports nothing of goldfive, not even for its types
(``goldfive.types`` imports it; what it reads of a task and a plan is described here).
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappop, heappush
from typing import Any, Protocol

__all__ = ["PlanTally", "status_counts"]


class _Task(Protocol):
    """What the tally reads of a ``goldfive.types.Task``."""

    @property
    def status(self) -> str: ...

    @property
    def _tally(self) -> tuple[PlanTally, int] | None: ...


class _Plan(Protocol):
    """What ``status_counts`` reads of a ``goldfive.types.Plan``."""

    @property
    def tasks(self) -> Sequence[_Task]: ...


class PlanTally:
    """The status counts of one tuple of tasks (a plan's; ``Plan.for_run`` copies share it).

    Each task holds ``(tally, its index)`` (``Task._tally``); a task moved into another plan's
    tally leaves this one invalid, rebuilt when it is next asked. Per status, a min-heap of the
    indexes of its tasks, cleaned lazily (an index whose task has moved on is dropped when it
    comes to the top), gives the status's first task."""

    __slots__ = ("tasks", "valid", "_counts", "_heaps", "_pushes")

    def __init__(self, tasks: Sequence[_Task]) -> None:
        self.tasks = tasks
        self.valid = False
        self._counts: dict[str, int] = {}
        self._heaps: dict[str, list[int]] = {}
        self._pushes = 0
        self.rebuild()

    def __reduce__(self) -> tuple[Any, ...]:
        # A task pickled or deep-copied alone must not carry its plan along: its copy's tally
        # is an invalid one, which ``moved`` ignores.
        return (_invalid, ())

    def rebuild(self) -> None:
        """Count the tasks again and make every one of them point here."""
        counts: dict[str, int] = {}
        heaps: dict[str, list[int]] = {}
        for i, task in enumerate(self.tasks):
            status = task.status
            counts[status] = counts.get(status, 0) + 1
            heaps.setdefault(status, []).append(i)  # ascending: already a heap
            entry = task._tally
            if entry is not None and entry[0] is not self:
                entry[0].valid = False  # the task's other plan counts again when it is asked
            object.__setattr__(task, "_tally", (self, i))
        self._counts, self._heaps, self._pushes, self.valid = counts, heaps, 0, True

    def moved(self, i: int, task: _Task, to: str) -> None:
        """Task ``i`` (``task``) goes from its status to ``to``; called before the write."""
        if not self.valid or self.tasks[i] is not task:
            return  # a copy of a counted task, or a tally left behind: nothing to count
        counts, frm = self._counts, task.status
        if frm == to:
            return
        if frm not in counts:  # a status written past set_task_status: count again when asked
            self.valid = False
            return
        left = counts[frm] - 1
        if left:
            counts[frm] = left
        else:
            del counts[frm]
            del self._heaps[frm]
        counts[to] = counts.get(to, 0) + 1
        heappush(self._heaps.setdefault(to, []), i)
        self._pushes += 1
        if self._pushes > 2 * len(self.tasks) + 64:
            self.valid = False  # the heaps hold mostly moved-on indexes: counted again when asked

    def items(self) -> list[tuple[str, int]]:
        """(status, count) for each status a task has, in the order of their first tasks."""
        if not self.valid:
            self.rebuild()
        tasks = self.tasks
        firsts: list[tuple[int, str, int]] = []
        for status, n in self._counts.items():
            heap = self._heaps[status]
            while heap and tasks[heap[0]].status != status:
                heappop(heap)
            if not heap:  # a status written past set_task_status: count again
                self.rebuild()
                return self.items()
            firsts.append((heap[0], status, n))
        firsts.sort(key=_first)
        return [(status, n) for _, status, n in firsts]


def _first(entry: tuple[int, str, int]) -> int:
    return entry[0]


def _invalid() -> PlanTally:
    tally = PlanTally(())
    tally.valid = False
    return tally


def status_counts(plan: _Plan) -> list[tuple[str, int]]:
    """How many of ``plan``'s tasks are in each status, in the order of each status's first task
    (``Counter(t.status for t in plan.tasks).items()``), from the plan's tally (built the first
    time, then kept by the status writes)."""
    tasks = plan.tasks
    if not tasks:
        return []
    entry = tasks[0]._tally
    tally = entry[0] if entry is not None and entry[0].tasks is tasks else None
    if tally is None:
        tally = PlanTally(tasks)  # (a Plan keeps its tasks as one tuple: the tally is known by it)
    return tally.items()
