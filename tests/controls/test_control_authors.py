"""Who did it (issue 23 item 8): every control a person sends carries who (the OS user
locally, the token's name on a hub) and through which client; reading the rules writes
nothing into the run's history, changing them is recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from goldfive.cli import main
from goldfive.controls.payloads import RULES_VERB
from goldfive.control import AckResult
from goldfive.settings import os_user
from tests.phone_kit import TOKENS, PhoneHub
from tests.runtime_kit import Harness, ScriptedAgent, executor, static  # noqa: F401


def _received(h: Harness) -> list[Any]:
    return [e.control_received for e in h.events if e.WhichOneof("payload") == "control_received"]


async def test_listing_rules_is_answered_and_never_recorded(executor: Any) -> None:
    agent = ScriptedAgent(hold=["a"])
    h = Harness(agent, executor, static("a"))
    h.start()
    await agent.started()
    before = len(h.events)
    ack = await h.control(RULES_VERB, op="list", author="alice", client="tui")
    assert ack.result == AckResult.SUCCESS and json.loads(ack.detail) == {"rules": [], "never_auto": []}
    assert len(h.events) == before  # nothing written: neither control_received nor control_acked
    added = await h.control(RULES_VERB, op="add", rule={"tool": "deploy", "match": {}}, author="alice", client="tui")
    assert added.result == AckResult.SUCCESS, added.detail
    agent.release("a")
    await h.finish()
    [change] = _received(h)  # the change is on the record, with who made it
    assert change.author == "alice" and change.control.custom_kind == RULES_VERB


def test_ctl_controls_carry_the_person_and_the_client_and_the_hub_its_token_name(tmp_path: Path) -> None:
    """`ctl pause` once went without an author: now the OS user and "ctl", and the hub puts
    the token's name first ("alice (as <OS user>)")."""
    hub = PhoneHub(tmp_path, http=False)
    try:
        hub.requested()  # the run is live and waiting
        for verb in (["pause", hub.run_id], ["rules", "list", hub.run_id], ["resume", hub.run_id]):
            result = CliRunner().invoke(main, ["ctl", hub.addr, "--token", TOKENS["alice"], *verb], catch_exceptions=False)
            assert result.exit_code == 0, result.output
        received = [e.control_received for e in hub.events() if e.WhichOneof("payload") == "control_received"]
        assert [r.kind for r in received] == ["PAUSE", "RESUME"]  # the listing is not in the history
        assert {r.author for r in received} == {f"alice (as {os_user()})"}
        assert all(json.loads(r.control.extra_json or "{}").get("client") == "ctl" for r in received), received
    finally:
        hub.stop()


def test_a_machine_rule_added_through_a_hub_hosted_run_that_ignores_machine_rules_says_so(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The hub's run reads no machine rules (RuntimeConfig.use_machine_rules off, as a demo
    run): the rule is saved for the machine, and the ack says it does not apply here."""
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path / "data"))
    hub = PhoneHub(tmp_path, http=False)
    try:
        hub.requested()
        ctl = ["ctl", hub.addr, "--token", TOKENS["alice"], "rules"]
        machine = CliRunner().invoke(main, [*ctl, "add", hub.run_id, "deploy", "--scope", "machine"], catch_exceptions=False)
        assert machine.exit_code == 0, machine.output
        assert "scope machine" in machine.output and "does not apply here" in machine.output
        assert "deploy" in (tmp_path / "data" / "approval_rules.json").read_text()  # saved for runs that read them
        run = CliRunner().invoke(main, [*ctl, "add", hub.run_id, "deploy", "--scope", "run"], catch_exceptions=False)
        assert run.exit_code == 0 and "scope run" in run.output and "does not apply" not in run.output
    finally:
        hub.stop()
