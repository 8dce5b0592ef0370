"""LoggingSink: one parseable JSON line per event through logging."""

from __future__ import annotations

import json
import logging

import pytest

from goldfive import events
from goldfive.errors import SinkError
from goldfive.sinks import LoggingSink
from goldfive.types import Session


async def test_each_event_is_logged_as_one_line_of_json(caplog: pytest.LogCaptureFixture) -> None:
    s = Session(run_id="r1", clock=lambda: 1_700_000_000_000)
    sink = LoggingSink("goldfive.test.events")
    with caplog.at_level(logging.INFO, logger="goldfive.test.events"):
        await sink.emit(events.run_started(s, goal_summary="ship it"))
        await sink.emit(events.task_failed(s, "t1", "boom\nsecond line"))
    lines = [r.getMessage() for r in caplog.records if r.name == "goldfive.test.events"]
    assert len(lines) == 2 and all("\n" not in line for line in lines)
    first, second = (json.loads(line) for line in lines)
    # run_id and started_at repeat the envelope for goldfive v1 readers
    assert first["runStarted"] == {"runId": "r1", "goalSummary": "ship it", "startedAt": "2023-11-14T22:13:20Z"}
    assert second["sequence"] == "1" and second["taskFailed"]["reason"] == "boom\nsecond line"
    assert second["emittedAt"] == "2023-11-14T22:13:20Z"


async def test_level_and_logger_object_are_honoured(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("goldfive.test.debug")
    sink = LoggingSink(logger, level=logging.DEBUG)
    s = Session(run_id="r1")
    with caplog.at_level(logging.INFO, logger="goldfive.test.debug"):
        await sink.emit(events.task_started(s, "t1"))  # DEBUG below INFO: not logged
    assert not [r for r in caplog.records if r.name == "goldfive.test.debug"]
    with caplog.at_level(logging.DEBUG, logger="goldfive.test.debug"):
        await sink.emit(events.task_started(s, "t2"))
    records = [r for r in caplog.records if r.name == "goldfive.test.debug"]
    assert [r.levelno for r in records] == [logging.DEBUG]
    assert json.loads(records[0].getMessage())["taskStarted"]["taskId"] == "t2"


async def test_default_logger_is_goldfive_events_and_emit_after_close_raises() -> None:
    sink = LoggingSink()
    assert sink.logger.name == "goldfive.events"
    await sink.close()
    with pytest.raises(SinkError):
        await sink.emit(events.task_started(Session(run_id="r1"), "t1"))
