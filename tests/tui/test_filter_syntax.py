"""The event log's filter: plain words, kind:, task: and severity>=, all of them must hold."""

from __future__ import annotations

from goldfive import events as E
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session
from goldfive_tui.format import LogLine, describe
from goldfive_tui.widgets.eventlog import _matches, filter_problem


def lines() -> list[LogLine]:
    s = Session(run_id="r")
    evs = [
        E.task_started(s, "draft"),
        E.task_failed(s, "draft", "the model refused"),
        E.task_completed(s, "research", "12 sources"),
        E.drift_detected(s, DriftEvent(DriftKind.CUSTOM, DriftSeverity.INFO, "status", "draft")),
        E.drift_detected(s, DriftEvent(DriftKind.TOOL_ERROR, DriftSeverity.WARNING, "tool broke", "draft")),
        E.drift_detected(s, DriftEvent(DriftKind.REPEATED_FAILURE, DriftSeverity.CRITICAL, "again", "research")),
    ]
    out = []
    for ev in evs:
        label, text, style = describe(ev)
        out.append(LogLine("00:00", label, text, style, ev))
    return out


def kinds(needle: str) -> list[str]:
    return [f"{ln.event.WhichOneof('payload')}:{getattr(getattr(ln.event, ln.event.WhichOneof('payload')), 'task_id', '') or ''}"
            for ln in lines() if ln.event is not None and _matches(ln, needle)]  # fmt: skip


def test_kind_task_and_severity_terms_select_what_they_name() -> None:
    assert kinds("kind:task_failed") == ["task_failed:draft"]
    assert kinds("task:research") == ["task_completed:research", "drift_detected:"]
    assert len(kinds("severity>=warning")) == 2 and len(kinds("severity>=critical")) == 1
    assert kinds("kind:task task:draft") == ["task_started:draft", "task_failed:draft"]


def test_plain_words_are_one_phrase_beside_the_terms_and_a_bad_severity_matches_nothing() -> None:
    assert kinds("model refused") == ["task_failed:draft"]
    assert kinds("refused model") == []
    assert kinds("kind:drift broke") == ["drift_detected:"]
    assert kinds("severity>=loud") == []
    assert len(kinds("")) == 6


def test_a_filter_that_can_match_nothing_says_why() -> None:
    """severity>=bogus once showed an empty log without a word (issue 23, low)."""
    assert filter_problem("severity>=bogus") == "bad severity 'bogus': info|warning|critical"
    assert filter_problem("severity>=warning kind:drift") == ""
    assert filter_problem("words only") == ""
