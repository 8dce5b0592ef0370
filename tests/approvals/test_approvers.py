"""``serve --approvers deploy=alice`` (issue 26, section 5): only the operators named may decide
calls of the tool, in every client; anyone else gets PERMISSION_DENIED with a sentence, and the
call does not run. Clients here: ``ctl``, the RemoteClient the TUI (attach, goldfive web attach)
sends its controls with, and a link page (tests/phone/test_phone_pages.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from goldfive.approvals.approvers import Approvers
from goldfive.cli import main
from goldfive.control import ControlKind, ControlMessage
from goldfive.errors import RemoteError, ServeConfigError
from goldfive.link.client import RemoteClient
from tests.phone_kit import TOKENS, PhoneHub


def test_the_names_of_every_matching_rule_decide() -> None:
    approvers = Approvers.parse(["deploy*=alice,bob", "deploy_prod=alice", "*=alice,bob,carol"])
    assert approvers.allowed("deploy_prod") == {"alice"}
    assert approvers.allowed("deploy_staging") == {"alice", "bob"}
    assert approvers.allowed("search") == {"alice", "bob", "carol"}
    assert Approvers.parse(["deploy=alice"]).allowed("search") is None  # no rule: any operator
    assert Approvers.parse(["deploy=alice"]).refusal("bob", "deploy") == (
        "bob may not decide calls of deploy: only alice may (serve --approvers)"
    )


def test_a_rule_for_always_counts_as_a_decision() -> None:
    approvers = Approvers.parse(["deploy=alice"])
    add = ControlMessage("approval_rules", payload={"op": "add", "rule": {"tool": "deploy", "match": {}}})
    assert "may not decide rules for deploy" in approvers.control_refusal(add, {}, "bob")
    assert approvers.control_refusal(add, {}, "alice") == ""
    listing = ControlMessage("approval_rules", payload={"op": "list"})
    assert approvers.control_refusal(listing, {}, "bob") == ""


def test_a_decision_on_an_approval_the_hub_has_not_seen_is_refused() -> None:
    approve = ControlMessage(ControlKind.APPROVE, payload={"target_id": "call-9"})
    assert "no pending approval 'call-9' is known to this hub" in Approvers.parse(["deploy=alice"]).control_refusal(approve, {}, "alice")


def test_an_answer_is_a_decision_the_approvers_rules_hold_too() -> None:
    from types import SimpleNamespace

    approvers = Approvers.parse(["*=alice"])
    answer = ControlMessage(ControlKind.ANSWER, payload={"target_id": "q-1", "text": "eu"})
    pending = {"q-1": SimpleNamespace(tool_name="", kind="question")}
    assert "bob may not decide question approval q-1" in approvers.control_refusal(answer, pending, "bob")
    assert approvers.control_refusal(answer, pending, "alice") == ""
    assert "no pending approval 'q-2'" in approvers.control_refusal(ControlMessage(ControlKind.ANSWER, payload={"target_id": "q-2"}), pending, "alice")


@pytest.mark.parametrize(
    ("spec", "message"),
    [("deploy", "must be TOOL=NAME"), ("deploy=", "must be TOOL=NAME"), ("deploy=al ice", "is not a token name")],
)
def test_malformed_approvers_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ServeConfigError, match=message):
        Approvers.parse([spec])


def _ctl(hub: PhoneHub, who: str, *args: str) -> object:
    return CliRunner().invoke(main, ["ctl", hub.addr, "--token", TOKENS[who], *args], catch_exceptions=False)


def test_only_the_approvers_decide_from_ctl_and_the_tui_client(tmp_path: Path) -> None:
    hub = PhoneHub(tmp_path, approvers=("deploy=alice",), http=False)
    try:
        target = hub.requested()
        refused = _ctl(hub, "bob", "approve", hub.run_id, target)
        assert refused.exit_code != 0  # type: ignore[attr-defined]
        assert f"PERMISSION_DENIED: bob may not decide deploy approval {target}: only alice may" in refused.output  # type: ignore[attr-defined]
        rule = _ctl(hub, "carol", "approve", hub.run_id, target, "--always")
        assert "carol may not decide" in rule.output  # type: ignore[attr-defined]
        added = _ctl(hub, "bob", "rules", "add", hub.run_id, "deploy", "--match", "{}")
        assert "bob may not decide rules for deploy" in added.output  # type: ignore[attr-defined]

        async def from_the_tui_client() -> str:  # what attach's GrpcSource.send does
            client = RemoteClient(hub.addr, token=TOKENS["carol"])
            async with client:
                try:
                    await client.send_control(hub.run_id, ControlMessage(ControlKind.REJECT, payload={"target_id": target, "client": "tui"}))
                except RemoteError as exc:
                    return f"{exc.code}: {exc}"
            return "sent"

        answer = hub.call(from_the_tui_client())
        assert answer.startswith("PERMISSION_DENIED") and "only alice may" in answer
        assert hub.ran == []
        ok = _ctl(hub, "alice", "approve", hub.run_id, target)
        assert ok.exit_code == 0, ok.output  # type: ignore[attr-defined]
        assert hub.wait_ran() == [{k: v for k, v in hub.calls[0].items()}]
        (entry,) = hub.ledger()
        assert (entry.outcome, entry.author.split(" ")[0], entry.client) == ("APPROVED", "alice", "ctl")  # "alice (as OS user)"
    finally:
        hub.stop()


def test_approvers_need_named_tokens_and_known_names(tmp_path: Path) -> None:
    with pytest.raises(ServeConfigError, match="needs operator tokens with names"):
        PhoneHub(tmp_path, approvers=("deploy=alice",), http=False, tokens={})
    with pytest.raises(ServeConfigError, match="names 'dave', which no operator token is called"):
        PhoneHub(tmp_path, approvers=("deploy=dave",), http=False)
    hub = PhoneHub(tmp_path, approvers=("deploy=dave",), http=False, notify=("to=dave :: cat > /dev/null",))
    hub.stop()  # a link recipient may be an approver
