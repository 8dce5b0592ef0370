"""The TUI's budget toasts say how much of a limit is used (issue 25 leftover)."""

from __future__ import annotations

from goldfive import events
from goldfive.types import Session
from tui.run.feed import RunFeed, share_used


def _feed(*evs: object) -> RunFeed:
    s, feed = Session(run_id="toast"), RunFeed()
    feed.apply(events.run_started(s, goal_summary="goal"))
    for make in evs:
        feed.apply(make(s))  # type: ignore[operator]
    return feed


def test_the_warning_toast_gives_the_real_share_in_its_title() -> None:
    feed = _feed(lambda s: events.budget_warning(s, "tokens", 2709, 3000, "tokens 2,709 of 3,000 (90%)"))
    alerts, bell = feed.take_alerts()
    assert [(a.title, a.message, a.severity) for a in alerts] == [("Budget 90% used", "tokens 2,709 of 3,000 (90%) used", "warning")]
    assert not bell


def test_several_warnings_make_one_toast_titled_by_the_limit_nearest_its_end() -> None:
    feed = _feed(
        lambda s: events.budget_warning(s, "usd", 1.6, 2.0, "usd $1.60 of $2.00 (80%)"),
        lambda s: events.budget_warning(s, "tokens", 4750, 5000, "tokens 4,750 of 5,000 (95%)"),
    )
    alerts, _ = feed.take_alerts()
    assert [(a.title, a.message) for a in alerts] == [("Budget 95% used", "tokens 4,750 of 5,000 (95%) used; usd $1.60 of $2.00 (80%) used")]
    assert feed.take_alerts() == ([], False)  # told once


def test_a_reached_limit_still_rings_and_says_so() -> None:
    feed = _feed(lambda s: events.budget_reached(s, "tokens", 3100, 3000, "tokens 3,100 of 3,000", "model_call"))
    alerts, bell = feed.take_alerts()
    assert [(a.title, a.severity) for a in alerts] == [("Budget reached", "error")]
    assert bell


def test_a_share_short_of_the_limit_never_reads_100() -> None:
    assert share_used(0.999) == "99%"
    assert share_used(0.8) == "80%"
    assert share_used(1.0) == "100%"


async def test_the_run_header_says_a_budget_holds_the_run_until_it_is_raised() -> None:
    """The trial: a demo over its budget showed PAUSING in the header for ever (its task is
    held at the gate, not ended) and nothing there said why once the toast had gone."""
    from goldfive.budget import Budget
    from tests.tui.conftest import make_rig, screen_text, settle

    rig = make_rig()
    async with rig.app.run_test(size=(120, 40)) as pilot:
        await settle(rig, pilot)
        s = rig.script.session
        rig.source.release([events.budget_changed(s, Budget(tokens=3000)), events.budget_reached(s, "tokens", 3100, 3000, "tokens 3,100 of 3,000", "model_call")])
        await settle(rig, pilot)
        header = screen_text(rig.app).splitlines()[:2]
        assert "needs you: budget reached, tokens 3,100 of 3,000 ($ raises it)" in header[1], header
        await pilot.press("p")  # RESUME, acked: the run goes on
        await settle(rig, pilot)
        assert "needs you" not in screen_text(rig.app).splitlines()[1]
