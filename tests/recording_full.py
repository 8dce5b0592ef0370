"""A recording whose disk fills up mid-run, made with SQLite's own limit: ``PRAGMA
max_page_count`` on the recording's connection caps the database at the pages it has now, so
the next commit that needs a new page fails with SQLITE_FULL ("database or disk is full"), as
on a full filesystem. No root, no loop device, no mocked filesystem.

:func:`agent` is a ``goldfive run`` agent (tests/store/test_recording_failure.py): the task named by
``GOLDFIVE_TEST_FILL_AT`` fills the disk, then reports a progress line too big for the pages
left; every task appends ``task_id attempt`` to ``GOLDFIVE_TEST_DONE``.
"""

from __future__ import annotations

import os
from typing import Any

from goldfive.run import current
from goldfive.sinks.sqlite import SQLitePersistenceSink
from goldfive.types import Session

#: A progress detail that needs overflow pages of its own.
BIG = "x" * 20_000


def recorders(session: Session) -> list[SQLitePersistenceSink]:
    """The run's SQLite sinks (a hosted run's RunRecorder unwrapped)."""
    from goldfive.store.recorder import RunRecorder

    ctx = current()  # called by the run's agent: the run is the current one
    assert ctx.session is session
    sinks = [s.sink if isinstance(s, RunRecorder) else s for s in ctx.fanout.sinks]
    return [s for s in sinks if isinstance(s, SQLitePersistenceSink)]


def fill(sink: SQLitePersistenceSink) -> None:
    """The disk is full now: the database cannot grow past the pages it has."""
    (pages,) = sink._conn.execute("PRAGMA page_count").fetchone()
    sink._conn.execute(f"PRAGMA max_page_count = {int(pages)}")


def free(sink: SQLitePersistenceSink) -> None:
    """Space was freed: the database may grow again."""
    sink._conn.execute("PRAGMA max_page_count = 1073741823")


async def agent(task: Any, session: Session, tools: dict[str, Any]) -> str:
    if task.id == os.environ.get("GOLDFIVE_TEST_FILL_AT"):
        for sink in recorders(session):
            fill(sink)
        await tools["report_task_progress"](detail=BIG)
    with open(os.environ["GOLDFIVE_TEST_DONE"], "a", encoding="utf-8") as f:
        f.write(f"{task.id} {task.attempt}\n")
    return f"{task.id} done"
