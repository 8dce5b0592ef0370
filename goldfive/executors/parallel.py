"""ParallelDAGExecutor: every ready task of a stage runs concurrently (bounded)."""

from __future__ import annotations

from goldfive.executors.base import ExecutorBase
from goldfive.run.context import RunContext
from goldfive.types import Task


class ParallelDAGExecutor(ExecutorBase):
    def __init__(self, *, max_concurrency: int | None = None, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.max_concurrency = max_concurrency

    def next_batch(self, ctx: RunContext) -> list[Task]:
        return self.ready_tasks(ctx, limit=self.max_concurrency)
