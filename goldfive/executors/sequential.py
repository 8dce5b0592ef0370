"""SequentialExecutor: one task at a time, in topological order."""

from __future__ import annotations

from goldfive.executors.base import ExecutorBase
from goldfive.run.context import RunContext
from goldfive.types import Task


class SequentialExecutor(ExecutorBase):
    def next_batch(self, ctx: RunContext) -> list[Task]:
        return self.ready_tasks(ctx, limit=1)
