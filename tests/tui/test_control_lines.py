"""A control from elsewhere (another client, or the run's history as attach, resume and a
reconnect read it) is one log line, rewritten by its ack, as a control sent from here is."""

from __future__ import annotations

from goldfive import events as E
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive_tui.run.feed import RunFeed
from goldfive_tui.widgets.eventlog import EventLog
from tests.tui.conftest import make_rig, settle

SIZE = (120, 40)


async def test_a_control_from_another_client_and_its_ack_are_one_line() -> None:
    rig = make_rig("opening")
    async with rig.app.run_test(size=SIZE) as pilot:
        await settle(rig, pilot)
        session = rig.script.session
        msg = ControlMessage(ControlKind.PAUSE, id="elsewhere1", payload={"author": "alice"})
        rig.source.release([E.control_received(session, msg)])
        await settle(rig, pilot)
        log = rig.app.query_one(EventLog)
        before = len(log.lines)
        assert "PAUSE by alice received, waiting for the ack" in log.lines[-1].text
        rig.source.release([E.control_acked(session, ControlAck("elsewhere1", AckResult.SUCCESS, "paused"), "PAUSE")])
        await settle(rig, pilot)
        assert len(log.lines) == before  # the ack rewrote the control's line, no second line
        texts = [line.text for line in log.lines if "PAUSE" in line.text]
        assert texts == ["PAUSE by alice → SUCCESS: paused"]


def test_an_ack_whose_control_was_never_seen_keeps_its_own_line() -> None:
    rig = make_rig("opening")
    feed = RunFeed()
    fold = feed.apply(E.control_acked(rig.script.session, ControlAck("unseen", AckResult.FAILURE, "no"), "PAUSE"))
    assert fold.line is not None and fold.rewrite == [] and fold.control == ""
