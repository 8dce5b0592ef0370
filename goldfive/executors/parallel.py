"""ParallelDAGExecutor: every ready task of a stage runs concurrently (bounded)."""

from __future__ import annotations

from goldfive.executors.base import ExecutorBase
from goldfive.run.context import RunContext
from goldfive.types import Task


class ParallelDAGExecutor(ExecutorBase):
    """``max_concurrency``: how many tasks run at once; None or 0 (as in goldfive v1) means no
    cap beyond the plan's own shape."""

    def __init__(self, *, max_concurrency: int | None = None, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        if max_concurrency is not None and max_concurrency < 0:
            raise ValueError(f"max_concurrency must be >= 0 (0: no cap), got {max_concurrency}")
        self.max_concurrency = max_concurrency or None

    def next_batch(self, ctx: RunContext) -> list[Task]:
        return self.ready_tasks(ctx, limit=self.max_concurrency)
