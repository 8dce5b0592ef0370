"""A reviewer that asks a person only when needed (issue 26, section 6): a model decides
routine tool calls under a person's instructions and escalates the rest; never for a
never-auto tool; each decision is the reviewer's in the ledger, with its reason; a person
overrules within the grace."""

from __future__ import annotations

import json
from typing import Any

import pytest

from goldfive.approvals import Rule, RuleBook, format_entry, ledger_of
from goldfive.approvals.reviewer import Reviewer, parse_verdict, review_call
from goldfive.control import AckResult, ControlKind
from goldfive.event_format import format_event
from goldfive.llm import ScriptedModel
from goldfive.planners.llm import LLMPlanner
from goldfive.run import RuntimeConfig
from goldfive.view import RunState
from tests.runtime_kit import executor  # noqa: F401
from tests.approvals.test_approvals_decisions import _deploy_harness

RULES = "Deploys of web with at most 3 replicas are routine: approve. Anything touching prod: ask."


def _reviewer(*answers: Any, grace_s: float = 0.0) -> tuple[Reviewer, ScriptedModel]:
    model = ScriptedModel(faults=answers)
    return Reviewer(RULES, call_llm=model.call_llm, model="m1", grace_s=grace_s), model


def _state(events: list[Any]) -> RunState:
    state = RunState()
    for ev in events:
        state.apply(ev)
    return state


async def test_a_routine_call_is_approved_by_the_reviewer_and_the_ledger_says_so(executor: Any) -> None:
    reviewer, model = _reviewer('{"decision": "approve", "reason": "web with 3 replicas is routine"}')
    h, ran, _ = _deploy_harness(executor, config=RuntimeConfig(approval_reviewer=reviewer))
    h.start("ship the web service")
    await h.finish()
    assert ran == [{"service": "web", "replicas": 3}]
    (call,) = model.calls
    assert call.kind == "approval.review" and RULES in call.system
    assert "The tool: deploy" in call.user and '{"replicas": 3, "service": "web"}' in call.user and "ship the web service" in call.user
    (reviewed,) = h.of("approval_reviewed")
    assert (reviewed.decision, reviewed.reason, reviewed.error, reviewed.model) == ("approve", "web with 3 replicas is routine", "", "m1")
    (entry,) = ledger_of(h.events)
    assert (entry.outcome, entry.author, entry.client) == ("APPROVED_BY_REVIEWER", "reviewer", "reviewer")
    assert entry.reason == "web with 3 replicas is routine" and entry.ran_args == {"service": "web", "replicas": 3}
    assert not entry.unverified
    assert "by reviewer via reviewer  reason: web with 3 replicas is routine" in format_entry(entry)


async def test_a_risky_call_is_escalated_with_the_reviewers_reason_and_a_person_decides(executor: Any) -> None:
    reviewer, _ = _reviewer('{"decision": "ask", "reason": "prod is not routine"}')
    h, ran, _ = _deploy_harness(executor, config=RuntimeConfig(approval_reviewer=reviewer), calls=[{"service": "prod", "replicas": 9}])
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    ev = await h.wait_event("approval_reviewed")
    assert "reviewer: ask" in format_event(ev) and "prod is not routine" in format_event(ev)
    view = _state(h.events).approvals[req.target_id]  # still waiting, the reason shown beside it
    assert (view.review, view.review_reason) == ("ask", "prod is not routine")
    assert ran == []
    await h.control(ControlKind.REJECT, target_id=req.target_id, detail="not today", author="alice", client="ctl")
    await h.finish()
    (entry,) = ledger_of(h.events)
    assert (entry.outcome, entry.author, entry.review, entry.review_reason) == ("REJECTED", "alice", "ask", "prod is not routine")
    assert "reviewer asked a person: prod is not routine" in format_entry(entry)


async def test_a_never_auto_tool_is_never_reviewed(executor: Any) -> None:
    reviewer, model = _reviewer('{"decision": "approve", "reason": "looks fine"}')
    config = RuntimeConfig(approval_reviewer=reviewer, approval_rules=RuleBook(never_auto=["deploy"]))
    h, ran, _ = _deploy_harness(executor, config=config)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.APPROVE, target_id=req.target_id, author="alice", client="tui")
    await h.finish()
    assert model.calls == [] and "approval_reviewed" not in h.kinds()
    assert [(e.outcome, e.author) for e in ledger_of(h.events)] == [("APPROVED", "alice")]


async def test_a_rule_still_decides_first_and_the_reviewer_is_not_asked(executor: Any) -> None:
    reviewer, model = _reviewer('{"decision": "reject", "reason": "no"}')
    config = RuntimeConfig(approval_reviewer=reviewer, approval_rules=RuleBook(rules=[Rule("deploy")]))
    h, ran, _ = _deploy_harness(executor, config=config)
    h.start()
    await h.finish()
    assert model.calls == [] and [e.outcome for e in ledger_of(h.events)] == ["APPROVED_BY_RULE"]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("sure, go ahead", "not JSON"),
        ('{"decision": "yes", "reason": "fine"}', "must be approve, reject or ask"),
        ('{"decision": "approve"}', "gives no reason"),
        ('{"decision": "approve", "reason": "ok", "also": 1}', "unknown keys"),
        (RuntimeError("server down"), "the reviewer's model failed: RuntimeError: server down"),
    ],
)
async def test_an_answer_that_is_not_a_verdict_escalates_never_approves(executor: Any, answer: Any, error: str) -> None:
    reviewer, _ = _reviewer(answer)
    h, ran, _ = _deploy_harness(executor, config=RuntimeConfig(approval_reviewer=reviewer))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    reviewed = (await h.wait_event("approval_reviewed")).approval_reviewed
    assert reviewed.decision == "ask" and error in reviewed.error and ran == []
    await h.control(ControlKind.APPROVE, target_id=req.target_id, author="alice", client="tui")
    await h.finish()
    (entry,) = ledger_of(h.events)
    assert (entry.outcome, entry.author, entry.review) == ("APPROVED", "alice", "ask") and error in entry.review_reason


async def test_a_person_overrules_the_reviewer_within_its_grace(executor: Any) -> None:
    reviewer, _ = _reviewer('{"decision": "approve", "reason": "routine"}', grace_s=30)
    h, ran, _ = _deploy_harness(executor, config=RuntimeConfig(approval_reviewer=reviewer))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    reviewed = (await h.wait_event("approval_reviewed")).approval_reviewed
    assert reviewed.grace_ms == 30_000 and ran == []  # held: nothing runs during the grace
    assert "in 30s unless a person decides" in format_event(next(e for e in h.events if e.HasField("approval_reviewed")))
    ack = await h.control(ControlKind.REJECT, target_id=req.target_id, detail="wrong week", author="alice", client="link")
    await h.finish()  # at once: the person's decision ends the wait, not the grace
    assert ack.result == AckResult.SUCCESS and ran == []
    (entry,) = ledger_of(h.events)
    assert (entry.outcome, entry.author, entry.client, entry.reason) == ("REJECTED", "alice", "link", "wrong week")
    assert "reviewer said approve: routine" in format_entry(entry)


async def test_the_reviewers_reject_applies_after_the_grace(executor: Any) -> None:
    reviewer, _ = _reviewer('{"decision": "reject", "reason": "too many replicas"}', grace_s=0.05)
    h, ran, results = _deploy_harness(executor, config=RuntimeConfig(approval_reviewer=reviewer))
    h.start()
    await h.finish()
    assert ran == []
    (entry,) = ledger_of(h.events)
    assert (entry.outcome, entry.author, entry.reason) == ("REJECTED_BY_REVIEWER", "reviewer", "too many replicas")


async def test_a_control_cannot_decide_as_the_reviewer(executor: Any) -> None:
    reviewer, _ = _reviewer('{"decision": "ask", "reason": "unsure"}')
    h, ran, _ = _deploy_harness(executor, config=RuntimeConfig(approval_reviewer=reviewer))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    for kind, who in ((ControlKind.APPROVE, {"author": "reviewer"}), (ControlKind.REJECT, {"client": "reviewer"})):
        ack = await h.control(kind, target_id=req.target_id, **who)
        assert ack.result == AckResult.FAILURE and "reviewer's own" in ack.detail
    assert ran == []
    await h.control(ControlKind.APPROVE, target_id=req.target_id, author="alice", client="tui")
    await h.finish()
    assert [(e.outcome, e.author) for e in ledger_of(h.events)] == [("APPROVED", "alice")]


async def test_without_a_model_of_its_own_the_reviewer_asks_the_runs_planner_model(executor: Any) -> None:
    model = ScriptedModel()  # plans, and answers a review with "ask"
    h, ran, _ = _deploy_harness(
        executor, config=RuntimeConfig(approval_reviewer=Reviewer(RULES)), planner=LLMPlanner(call_llm=model.call_llm, model="scripted")
    )
    h.start("deploy web")
    req = (await h.wait_event("approval_requested")).approval_requested
    reviewed = (await h.wait_event("approval_reviewed")).approval_reviewed
    assert reviewed.decision == "ask" and "scripted model" in reviewed.reason and reviewed.model == "scripted"
    assert "approval.review" in [c.kind for c in model.calls]
    await h.control(ControlKind.CANCEL, why="enough")
    await h.shutdown()
    assert req.tool_name == "deploy" and ran == []


async def test_no_model_at_all_escalates_saying_why() -> None:
    verdict = await review_call(Reviewer(RULES), None, goal="g", task="t", tool_name="deploy", args={})
    assert verdict.decision == "ask" and "no model to review with" in verdict.error


def test_a_verdict_is_strict_json_in_at_most_one_fence() -> None:
    assert parse_verdict('```json\n{"decision": "reject", "reason": " too  big "}\n```').reason == "too big"
    with pytest.raises(ValueError, match="must be a JSON object"):
        parse_verdict(json.dumps(["approve"]))
    with pytest.raises(ValueError, match="instructions"):
        Reviewer("  ")
    with pytest.raises(ValueError, match="grace_s"):
        Reviewer(RULES, grace_s=-1)


def test_a_hub_snapshot_and_the_phone_page_show_the_reviewers_reason_beside_the_waiting_call() -> None:
    from goldfive import events
    from goldfive.phone.items import ApprovalKind
    from goldfive.remote.summaries import snapshot
    from goldfive.types import Session
    from tests.hub.test_hub_server import _served

    s, state = Session(run_id="rev1"), RunState()
    state.apply(events.run_started(s, goal_summary="goal"))
    state.apply(events.approval_requested(s, target_id="c1", kind="tool", tool_name="deploy", args={"service": "prod"}))
    state.apply(events.approval_reviewed(s, "c1", decision="ask", reason="prod is not routine"))
    (pending,) = snapshot(_served("rev1", state)).pending_approvals
    assert (pending.review, pending.review_reason) == ("ask", "prod is not routine")
    item = ApprovalKind().find("rev1", state, "c1")
    assert item is not None and ("reviewer", "asks you: prod is not routine") in item.facts


async def test_the_processs_default_reviewer_serves_a_run_that_sets_none(executor: Any) -> None:
    from dataclasses import replace

    from goldfive.run.defaults import install_run_defaults, run_defaults

    reviewer, model = _reviewer('{"decision": "approve", "reason": "routine"}')
    before = run_defaults()
    install_run_defaults(replace(before, reviewer=reviewer))  # what --approvals review installs
    try:
        h, ran, _ = _deploy_harness(executor)
        h.start()
        await h.finish()
    finally:
        install_run_defaults(before)
    assert ran == [{"service": "web", "replicas": 3}] and [e.outcome for e in ledger_of(h.events)] == ["APPROVED_BY_REVIEWER"]


def test_the_command_line_reads_instructions_from_a_file_or_as_text_and_checks_the_grace(tmp_path: Any) -> None:
    from goldfive.cli.extras import make_reviewer
    from goldfive.errors import GoldfiveError

    path = tmp_path / "review.txt"
    path.write_text("Approve deploys of web.\n")
    assert make_reviewer(str(path), "500ms") == Reviewer("Approve deploys of web.", grace_s=0.5)
    assert make_reviewer("Approve reads.", None) == Reviewer("Approve reads.", grace_s=2.0)
    assert make_reviewer(None, None) is None
    for instructions, grace, needle in ((None, "5s", "goes with --review-instructions"), ("x", "soon", "not a duration"),
                                        ("x", "7200s", "between 0 s and an hour"), (" ", None, "is empty")):  # fmt: skip
        with pytest.raises(GoldfiveError, match=needle):
            make_reviewer(instructions, grace)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--approvals", "review"], "needs --review-instructions"),
        (["--review-instructions", "x"], "go with --approvals review"),
        (["--approvals", "review", "--review-instructions", "x", "--headless"], "no --hub"),
        (["--approvals", "review", "--review-instructions", "x", "--plan", "plan.json", "--headless", "--hub", "127.0.0.1:9"],
         "needs a model to review with"),
    ],
)
def test_run_refuses_a_reviewer_it_could_not_serve_in_one_line(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, args: list[str], needle: str) -> None:
    from click.testing import CliRunner

    from goldfive.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps({"summary": "s", "tasks": [{"id": "a", "title": "A"}], "edges": []}))
    (tmp_path / "rev_agents.py").write_text("async def agent(task, session):\n    return 'ok'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for var in ("GOLDFIVE_LLM_MODEL", "GOLDFIVE_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    result = CliRunner().invoke(main, ["run", "rev_agents:agent", "--goal", "g", *args])
    assert result.exit_code == 2 and needle in result.stderr, result.stderr


def test_the_tuis_ledger_says_what_the_reviewer_said_as_ctl_ledger_does() -> None:
    from goldfive import events
    from goldfive.approvals import Outcome
    from goldfive.types import Session
    from tui.run.feed import RunFeed

    s, feed = Session(run_id="rev2"), RunFeed()
    evs = [
        events.run_started(s, goal_summary="goal"),
        events.approval_requested(s, target_id="c1", kind="tool", tool_name="deploy", args={"service": "prod"}),
        events.approval_reviewed(s, "c1", decision="ask", reason="prod is not routine"),
        events.approval_decided(s, target_id="c1", outcome=Outcome.REJECTED, author="alice", client="tui", kind="tool", tool_name="deploy"),
    ]
    for ev in evs:
        feed.apply(ev)
    assert [format_entry(e) for e in feed.ledger] == [format_entry(e) for e in ledger_of(evs)]
    assert "reviewer asked a person: prod is not routine" in format_entry(feed.ledger[0])


async def test_a_person_is_notified_only_when_the_reviewer_asks(executor: Any) -> None:
    from goldfive.notify import NoticeTracker

    for answer, notified in (('{"decision": "approve", "reason": "routine"}', False), ('{"decision": "ask", "reason": "prod"}', True)):
        reviewer, _ = _reviewer(answer)
        h, ran, _ = _deploy_harness(executor, config=RuntimeConfig(approval_reviewer=reviewer))
        tracker, notices = NoticeTracker(), []
        h.start()
        req = (await h.wait_event("approval_requested")).approval_requested
        assert req.under_review
        await h.wait_event("approval_reviewed")
        if notified:
            await h.control(ControlKind.REJECT, target_id=req.target_id, author="alice")
        await h.finish()
        for ev in h.events:
            notices += tracker.feed(ev)
        approvals = [n for n in notices if n.kind == "approval"]
        if notified:
            (notice,) = approvals
            assert notice.target_id == req.target_id and "the reviewer asks you: prod" in notice.reason
        else:
            assert approvals == []


async def test_a_tool_the_reviewer_never_reviews_goes_to_a_person_and_is_notified_at_once(executor: Any) -> None:
    from goldfive.notify import NoticeTracker

    model = ScriptedModel(faults=['{"decision": "approve", "reason": "routine"}'])
    reviewer = Reviewer(RULES, call_llm=model.call_llm, never=("dep*",))
    h, ran, _ = _deploy_harness(executor, config=RuntimeConfig(approval_reviewer=reviewer))
    h.start()
    ev = await h.wait_event("approval_requested")
    assert not ev.approval_requested.under_review and NoticeTracker().feed(ev) != []
    await h.control(ControlKind.APPROVE, target_id=ev.approval_requested.target_id, author="alice")
    await h.finish()
    assert model.calls == [] and [e.author for e in ledger_of(h.events)] == ["alice"]


def test_a_hubs_approvers_rules_keep_their_tools_from_the_reviewer() -> None:
    from goldfive.approvals.approvers import Approvers
    from goldfive.cli.extras import hub_reviewer

    reviewer = hub_reviewer(Reviewer(RULES, never=("rm",)), Approvers.parse(["deploy*=alice,bob"]))
    assert reviewer.never == ("rm", "deploy*")
    assert not reviewer.reviews("deploy_prod") and not reviewer.reviews("rm") and reviewer.reviews("read_file")


def test_on_a_hub_ctl_status_shows_the_reviewers_reason_and_the_ledger_keeps_it(tmp_path: Any) -> None:
    from goldfive.adapters.callable import CallableAdapter
    from goldfive.planners.static import StaticPlanner
    from goldfive.run.user_tools import UserTool
    from goldfive.runner import Runner
    from goldfive.testing import HubThread, ctl, until_sync
    from goldfive.types import Plan, Task

    async def deploy(service: str) -> str:
        """Deploy a service."""
        return "deployed"

    async def agent(task: Any, session: Any, tools: dict[str, Any]) -> str:
        return str(await tools["deploy"](service="prod"))

    model = ScriptedModel(faults=['{"decision": "ask", "reason": "prod is not routine"}'])
    config = RuntimeConfig(approval_reviewer=Reviewer(RULES, call_llm=model.call_llm))

    def factory(*, sinks: Any, control: Any, run_id: str | None = None) -> Runner:
        adapter = CallableAdapter(agent, tools=[UserTool(deploy, requires_approval=True)])
        plan = Plan(tasks=[Task("a", "ship")], id="p1")
        return Runner(agent=adapter, planner=StaticPlanner(plan), sinks=sinks, control=control, run_id=run_id, config=config)

    hub = HubThread(tmp_path / "runs.sqlite")
    try:
        async def start() -> Any:
            return hub.host.start_run(factory, "ship prod", run_id="rv1")

        run = hub.call(start())
        until_sync(lambda: any(v.review for v in run.state.approvals.values()), "the reviewer's verdict", timeout=5)
        (target,) = list(run.state.approvals)
        status = ctl(hub.addr, "status", "rv1")
        assert status.exit_code == 0 and f"approval waiting: {target}" in status.output
        assert "reviewer asks a person: prod is not routine" in status.output
        assert ctl(hub.addr, "reject", "rv1", target, "--detail", "not today").exit_code == 0
        until_sync(lambda: run.state.finished, "the run's end", timeout=5)
        ledger = ctl(hub.addr, "ledger", "rv1")
        assert "REJECTED" in ledger.output and "reviewer asked a person: prod is not routine" in ledger.output
    finally:
        hub.stop()
