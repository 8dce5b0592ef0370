"""Which PENDING tasks are ready, without rescanning the whole plan for every batch."""

from __future__ import annotations

from bisect import insort

from goldfive.types import Plan, Task, TaskStatus

_COMPLETED = TaskStatus.COMPLETED
_PENDING = TaskStatus.PENDING
_TERMINAL = frozenset(s for s in TaskStatus if s.is_terminal)


class ReadyFrontier:
    """The plan's minimal unfinished tasks: not COMPLETED, every predecessor COMPLETED.

    The PENDING ones among them are exactly the ready tasks (``Plan.is_ready``). The frontier
    is kept in topological order and advanced as tasks complete, so choosing a batch costs
    O(frontier) instead of O(plan) (a linear plan no longer costs O(n^2) over a run).

    It relies on statuses only moving forward; ``reset()`` after anything that moves one back
    (a rewind). A new plan object (a revision) is detected and rebuilt automatically, and so is
    a task completed outside the frontier (an agent reporting another task done): the caller
    passes ``completed``, the size of ``session.completed_results``, which then grows by more
    than the frontier saw.
    """

    def __init__(self) -> None:
        self._plan: Plan | None = None
        self._order: list[Task] = []
        self._pos: dict[str, int] = {}
        self._front: list[int] | None = None  # topological positions, sorted
        self._members: set[int] = set()
        #: task id -> how many of its predecessors are not COMPLETED yet (for tasks not done):
        #: a wide fan-in is admitted in O(1) per finished predecessor, not O(predecessors).
        self._missing: dict[str, int] = {}
        self._done_at_build: set[str] = set()
        self._base = 0  # ``completed`` at the last rebuild
        self._seen = 0  # completions the frontier processed since

    def reset(self) -> None:
        self._front = None

    def ready(self, plan: Plan, limit: int | None, completed: int = 0) -> list[Task]:
        """Up to ``limit`` ready tasks, in topological order (stable to plan order)."""
        if plan is not self._plan:
            self._plan = plan
            self._order = plan.topological_order()
            self._pos = {t.id: i for i, t in enumerate(self._order)}
            self._front = None
        if self._front is None:
            self._rebuild(plan, completed)
        out = self._scan(plan, limit)
        if completed - self._base > self._seen:
            self._rebuild(plan, completed)
            out = self._scan(plan, limit)
        return out

    def _scan(self, plan: Plan, limit: int | None) -> list[Task]:
        front = self._front
        assert front is not None
        order, out, i = self._order, [], 0
        while i < len(front):
            task = order[front[i]]
            status = task.status
            if status is _COMPLETED:
                # Leaves the frontier; successors whose predecessors are now all done join it
                # (after position i, since they come later in topological order).
                self._members.discard(front.pop(i))
                if task.id not in self._done_at_build:
                    self._seen += 1
                for succ in plan._succ.get(task.id, ()):
                    left = self._missing.get(succ)
                    if left is not None:
                        self._missing[succ] = left = left - 1
                        if left <= 0:
                            self._admit(succ)
                continue
            if status in _TERMINAL:  # failed / cancelled / not needed: nothing behind it can run
                self._members.discard(front.pop(i))
                continue
            if status is _PENDING:
                out.append(task)
                if limit is not None and len(out) >= limit:
                    break
            i += 1
        return out

    def _rebuild(self, plan: Plan, completed: int) -> None:
        self._base, self._seen = completed, 0
        self._front = []
        self._members = set()
        self._done_at_build = {t.id for t in self._order if t.status is _COMPLETED}
        self._missing = {}
        any_done = bool(self._done_at_build)
        pred = plan._pred  # one pass over every task: its index read directly, no method call each
        for task in self._order:
            if task.status is _COMPLETED:
                continue
            preds = pred.get(task.id)
            if not preds:
                missing = 0
            elif any_done:
                missing = sum(1 for p in preds if plan.task(p).status is not _COMPLETED)
            else:  # nothing completed yet (a run's first build): every predecessor is missing
                missing = len(preds)
            self._missing[task.id] = missing
            if missing == 0:
                pos = self._pos[task.id]
                self._front.append(pos)
                self._members.add(pos)

    def _admit(self, task_id: str) -> None:
        pos = self._pos.get(task_id)
        if pos is None or pos in self._members:
            return
        assert self._front is not None
        insort(self._front, pos)
        self._members.add(pos)
