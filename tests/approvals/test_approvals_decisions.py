"""Approvals a person can trust (issue 15), in both executors through ``UserTool``: edit then
approve, the ledger, timeout policies, several approvals at once, a denial final in its turn."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from goldfive.adapters.callable import CallableAdapter
from goldfive.approvals import ApprovalPolicy, Matcher, OnTimeout, Rule, RuleBook, ledger_of
from goldfive.control import AckResult, ControlKind
from goldfive.planners.static import StaticPlanner
from goldfive.run import RuntimeConfig
from goldfive.run.user_tools import UserTool
from goldfive.types import Plan, Session, Task
from tests.runtime_kit import Harness, executor, is_subsequence, static  # noqa: F401


def _deploy_harness(
    executor: Any, *, calls: list[dict[str, Any]] | None = None, policy: ApprovalPolicy | None = None,
    config: RuntimeConfig | None = None, planner: Any = None, tries: int = 1,
) -> tuple[Harness, list[dict[str, Any]], list[Any]]:
    ran: list[dict[str, Any]] = []
    results: list[Any] = []

    async def deploy(service: str, replicas: int) -> dict[str, Any]:
        """Deploy a service."""
        ran.append({"service": service, "replicas": replicas})
        return {"ok": True}

    async def fn(task: Task, session: Session, tools: dict[str, Any]) -> str:
        for args in calls or [{"service": "web", "replicas": 3}]:
            for _ in range(tries):
                results.append(await tools["deploy"](**args))
        return "ok"

    adapter = CallableAdapter(fn, tools=[UserTool(deploy, requires_approval=True, policy=policy)])
    return Harness(adapter, executor, planner or static("a"), config=config), ran, results


# -- 1. edit, then approve ----------------------------------------------------------------


async def test_approve_with_edited_arguments_runs_them_and_tells_the_model(executor: Any) -> None:
    h, ran, results = _deploy_harness(executor)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert json.loads(req.parameters_json)["properties"] == {"service": {"type": "string"}, "replicas": {"type": "integer"}}
    ack = await h.control(ControlKind.APPROVE, target_id=req.target_id, arguments={"service": "web", "replicas": 1},
                          author="carol", client="ctl")  # fmt: skip
    await h.finish()
    assert ack.result == AckResult.SUCCESS and "edited" in ack.detail
    assert ran == [{"service": "web", "replicas": 1}]
    assert "replicas\": 1" in results[0]["approval_note"] and "instead of" in results[0]["approval_note"]
    granted = h.of("approval_granted")[0]
    assert json.loads(granted.arguments_json) == {"service": "web", "replicas": 1}
    (entry,) = ledger_of(h.events)
    assert (entry.outcome, entry.author, entry.client, entry.control_id) == ("EDITED_APPROVED", "carol", "ctl", ack.control_id)
    assert entry.requested_args == {"service": "web", "replicas": 3} and entry.ran_args == {"service": "web", "replicas": 1}


async def test_edited_arguments_with_a_wrong_name_or_type_are_refused_and_nothing_runs(executor: Any) -> None:
    h, ran, results = _deploy_harness(executor)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    bad_name = await h.control(ControlKind.APPROVE, target_id=req.target_id, arguments={"service": "web", "replica": 1})
    bad_type = await h.control(ControlKind.APPROVE, target_id=req.target_id, arguments={"service": "web", "replicas": "1"})
    missing = await h.control(ControlKind.APPROVE, target_id=req.target_id, arguments={"replicas": 2})
    not_object = await h.control(ControlKind.APPROVE, target_id=req.target_id, arguments=[1])
    assert bad_name.result == AckResult.FAILURE and "unknown argument 'replica'" in bad_name.detail
    assert bad_type.result == AckResult.FAILURE and "argument 'replicas' must be integer, got string" in bad_type.detail
    assert missing.result == AckResult.FAILURE and "argument 'service' is required" in missing.detail
    assert not_object.result == AckResult.FAILURE and "must be a JSON object" in not_object.detail
    assert ran == [] and "approval_granted" not in h.kinds()
    await h.control(ControlKind.APPROVE, target_id=req.target_id)  # still pending: an unedited approve runs it as asked
    await h.finish()
    assert ran == [{"service": "web", "replicas": 3}]
    assert [e.outcome for e in ledger_of(h.events)] == ["APPROVED"]


# -- 3. the ledger -------------------------------------------------------------------------


async def test_every_decision_is_in_the_ledger_with_who_and_what_ran(executor: Any) -> None:
    calls = [{"service": "a", "replicas": 1}, {"service": "b", "replicas": 2}]
    h, ran, _ = _deploy_harness(executor, calls=calls)
    h.start()
    first = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.APPROVE, target_id=first.target_id, author="dave", client="tui")
    second = (await h.wait_event("approval_requested", lambda p: p.target_id != first.target_id)).approval_requested
    await h.control(ControlKind.REJECT, target_id=second.target_id, detail="not b", author="erin", client="attach")
    await h.finish()
    a, b = ledger_of(h.events)
    assert (a.outcome, a.author, a.client, a.ran_args) == ("APPROVED", "dave", "tui", {"service": "a", "replicas": 1})
    assert (b.outcome, b.author, b.client, b.reason, b.ran_args) == ("REJECTED", "erin", "attach", "not b", None)
    assert b.requested_args == {"service": "b", "replicas": 2}
    assert ran == [{"service": "a", "replicas": 1}]


async def test_a_cancelled_run_records_its_waiting_approval_as_cancelled(executor: Any) -> None:
    h, ran, _ = _deploy_harness(executor)
    h.start()
    await h.wait_event("approval_requested")
    await h.control(ControlKind.CANCEL, reason="stop")
    await h.finish()
    (entry,) = ledger_of(h.events)
    assert entry.outcome == "CANCELLED" and entry.author == "goldfive" and ran == []


# -- 4. timeouts that say what they are ------------------------------------------------------


async def test_reject_policy_times_out_as_timed_out_and_warns_first(executor: Any) -> None:
    policy = ApprovalPolicy(OnTimeout.REJECT, timeout_s=0.05, warn_before_s=0.03)
    h, ran, results = _deploy_harness(executor, policy=policy)
    h.start()
    await h.finish()
    assert ran == [] and results[0]["reason"] == "approval_timeout" and "timed out" in results[0]["message"]
    req = h.of("approval_requested")[0]
    assert (req.on_timeout, req.timeout_ms) == ("reject", 50)
    rejected = h.of("approval_rejected")[0]
    assert rejected.timed_out is True
    (entry,) = ledger_of(h.events)
    assert entry.outcome == "TIMED_OUT" and entry.author == "goldfive"
    assert "approval_expiring" not in h.kinds()  # under a second: too short to warn before acting


async def test_a_deadline_of_a_second_or_more_warns_before_it_acts(executor: Any) -> None:
    policy = ApprovalPolicy(OnTimeout.REJECT, timeout_s=1.0, warn_before_s=0.9)  # warns at 0.8 s
    h, ran, _ = _deploy_harness(executor, policy=policy)
    h.start()
    warn = (await h.wait_event("approval_expiring")).approval_expiring
    assert warn.on_timeout == "reject" and 0 < warn.ms_left <= 200
    await h.control(ControlKind.APPROVE, target_id=warn.target_id)
    await h.finish()
    assert ran == [{"service": "web", "replicas": 3}] and [e.outcome for e in ledger_of(h.events)] == ["APPROVED"]


async def test_escalate_policy_pauses_the_run_and_keeps_waiting(executor: Any) -> None:
    config = RuntimeConfig(approval_policy=ApprovalPolicy(OnTimeout.ESCALATE, timeout_s=0.02))
    h, ran, _ = _deploy_harness(executor, config=config)
    h.start()
    drift = (await h.wait_event("drift_detected", lambda p: "paused for a person" in p.detail)).drift_detected
    req = h.of("approval_requested")[0]
    assert req.on_timeout == "escalate" and drift.detail.startswith(f"approval {req.target_id}")
    escalated = (await h.wait_event("control_acked", lambda p: p.kind == "GOLDFIVE_PAUSE_ESCALATE")).control_acked
    assert escalated.ack.detail == "paused for human intervention"
    assert h.runner.context is not None and h.runner.context.paused
    await h.control(ControlKind.APPROVE, target_id=req.target_id)
    await h.control(ControlKind.RESUME)
    await h.finish()
    assert ran == [{"service": "web", "replicas": 3}] and "TIMED_OUT" not in [e.outcome for e in ledger_of(h.events)]


async def test_the_default_policy_waits_without_a_deadline(executor: Any) -> None:
    h, _, _ = _deploy_harness(executor)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (req.on_timeout, req.timeout_ms) == ("wait", 0)
    await h.control(ControlKind.REJECT, target_id=req.target_id)
    await h.finish()


# -- 5. several approvals at once ------------------------------------------------------------


async def test_parallel_calls_in_one_turn_each_have_their_own_approval(executor: Any) -> None:
    ran: list[str] = []

    async def deploy(service: str) -> str:
        ran.append(service)
        return service

    async def fn(task: Task, session: Session, tools: dict[str, Any]) -> list[Any]:
        return list(await asyncio.gather(*(tools["deploy"](service=s) for s in ("x", "y", "z"))))

    h = Harness(CallableAdapter(fn, tools=[UserTool(deploy, requires_approval=True)]), executor, static("a"))
    h.start()
    await h.wait_event("approval_requested", lambda p: json.loads(p.args_json)["service"] == "z")
    reqs = {json.loads(r.args_json)["service"]: r.target_id for r in h.of("approval_requested")}
    assert len(set(reqs.values())) == 3
    await h.control(ControlKind.REJECT, target_id=reqs["y"])
    assert ran == []  # deciding y ran nothing, and decided nothing else
    assert h.runner.session is not None and set(h.runner.session.pending_approvals) == {reqs["x"], reqs["z"]}
    await h.control(ControlKind.APPROVE, target_id=reqs["z"])
    await h.control(ControlKind.APPROVE, target_id=reqs["x"])
    await h.finish()
    assert sorted(ran) == ["x", "z"]
    assert {e.target_id: e.outcome for e in ledger_of(h.events)} == {reqs["x"]: "APPROVED", reqs["y"]: "REJECTED", reqs["z"]: "APPROVED"}


async def test_approvals_from_parallel_tasks_are_decided_independently(executor: Any) -> None:
    from goldfive.executors.parallel import ParallelDAGExecutor

    plan = Plan(tasks=[Task(id="a", title="A", description="a"), Task(id="b", title="B", description="b")], edges=[], id="p")
    calls = [{"service": "s", "replicas": 1}]
    h, ran, _ = _deploy_harness(executor, calls=calls, planner=StaticPlanner(plan))
    h.start()
    first = (await h.wait_event("approval_requested")).approval_requested
    if isinstance(executor, ParallelDAGExecutor):
        second = (await h.wait_event("approval_requested", lambda p: p.task_id != first.task_id)).approval_requested
        assert second.target_id != first.target_id
        await h.control(ControlKind.APPROVE, target_id=second.target_id)
        assert h.runner.session is not None and first.target_id in h.runner.session.pending_approvals
        await h.control(ControlKind.REJECT, target_id=first.target_id)
    else:  # one at a time: the second is asked only once the first is decided
        await h.control(ControlKind.REJECT, target_id=first.target_id)
        second = (await h.wait_event("approval_requested", lambda p: p.task_id != first.task_id)).approval_requested
        await h.control(ControlKind.APPROVE, target_id=second.target_id)
    await h.finish()
    assert len(ran) == 1
    outcomes = {e.task_id: e.outcome for e in ledger_of(h.events)}
    assert outcomes == {first.task_id: "REJECTED", second.task_id: "APPROVED"}


# -- 6. a denial is final inside the turn ------------------------------------------------------


async def test_a_rejected_call_retried_in_the_turn_is_asked_again_never_run_silently(executor: Any) -> None:
    h, ran, results = _deploy_harness(executor, tries=2)
    h.start()
    first = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.REJECT, target_id=first.target_id, detail="no")
    retry = (await h.wait_event("approval_requested", lambda p: p.target_id != first.target_id)).approval_requested
    assert retry.retry_of == first.target_id and ran == []
    await h.control(ControlKind.REJECT, target_id=retry.target_id)
    await h.finish()
    assert ran == [] and [r["reason"] for r in results] == ["user_rejected", "user_rejected"]
    assert "do not retry it unchanged" in results[0]["message"]


async def test_a_rejected_call_retried_is_decided_by_a_rule_made_meanwhile(executor: Any) -> None:
    h, ran, results = _deploy_harness(executor, tries=2)
    h.start()
    first = (await h.wait_event("approval_requested")).approval_requested
    ctx = h.runner.context
    assert ctx is not None
    ctx.approval_desk.add_rule(Rule("deploy", {"service": Matcher("exact", "web"), "replicas": Matcher("range", low=1, high=3)}, author="fay"))
    await h.control(ControlKind.REJECT, target_id=first.target_id)
    await h.finish()
    assert ran == [{"service": "web", "replicas": 3}]
    rejected, by_rule = ledger_of(h.events)
    assert rejected.outcome == "REJECTED" and by_rule.outcome == "APPROVED_BY_RULE" and by_rule.rule_author == "fay"


# -- 2. rules, through the run -------------------------------------------------------------------


async def test_a_rule_approves_inside_what_it_names_and_asks_outside(executor: Any) -> None:
    book = RuleBook()
    book.add(Rule("deploy", {"service": Matcher("glob", "web-*"), "replicas": Matcher("range", low=1, high=5)}, author="gus", made_at_ms=1_000))
    calls = [{"service": "web-1", "replicas": 2}, {"service": "db", "replicas": 2}]
    h, ran, _ = _deploy_harness(executor, calls=calls, config=RuntimeConfig(approval_rules=book))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert json.loads(req.args_json)["service"] == "db"
    await h.control(ControlKind.APPROVE, target_id=req.target_id)
    await h.finish()
    by_rule, person = ledger_of(h.events)
    assert by_rule.outcome == "APPROVED_BY_RULE" and by_rule.rule_id == "R1"
    assert by_rule.reason.startswith("approved by rule R1 (made by gus at 1970-01-01")
    assert person.outcome == "APPROVED" and len(ran) == 2


async def test_approve_always_adds_a_rule_for_the_next_calls(executor: Any) -> None:
    calls = [{"service": "web", "replicas": 1}, {"service": "web", "replicas": 2}, {"service": "web", "replicas": 9}]
    h, ran, _ = _deploy_harness(executor, calls=calls)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    ack = await h.control(ControlKind.APPROVE, target_id=req.target_id, author="hal",
                          always={"match": {"service": {"kind": "exact", "value": "web"}, "replicas": {"kind": "range", "low": 1, "high": 5}}})  # fmt: skip
    assert ack.result == AckResult.SUCCESS and "always for deploy" in ack.detail
    third = (await h.wait_event("approval_requested", lambda p: p.target_id != req.target_id)).approval_requested
    assert json.loads(third.args_json)["replicas"] == 9
    await h.control(ControlKind.REJECT, target_id=third.target_id)
    await h.finish()
    assert [e.outcome for e in ledger_of(h.events)] == ["APPROVED", "APPROVED_BY_RULE", "REJECTED"]
    assert len(ran) == 2


async def test_a_never_auto_tool_asks_whatever_the_rules_say(executor: Any) -> None:
    book = RuleBook(rules=[Rule("deploy")], never_auto=["deploy"])
    h, ran, _ = _deploy_harness(executor, config=RuntimeConfig(approval_rules=book))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.APPROVE, target_id=req.target_id)
    await h.finish()
    assert [e.outcome for e in ledger_of(h.events)] == ["APPROVED"]


async def test_a_bad_always_is_refused_and_nothing_runs(executor: Any) -> None:
    h, ran, _ = _deploy_harness(executor)
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    ack = await h.control(ControlKind.APPROVE, target_id=req.target_id, always={"match": {"service": {"kind": "regex"}}})
    assert ack.result == AckResult.FAILURE and "matcher kind must be one of" in ack.detail and ran == []
    await h.control(ControlKind.REJECT, target_id=req.target_id)
    await h.finish()
    assert is_subsequence(["approval_requested", "approval_rejected"], h.kinds())


async def test_an_approved_calls_arguments_are_the_same_json_text_in_its_request_its_ledger_entry_and_its_step(
    executor: Any,
) -> None:
    """The request, the ledger's entry and the tool's step carry ``json.dumps(args,
    ensure_ascii=False, sort_keys=True, default=str)`` byte for byte (the ledger's JSON is
    compared and hashed)."""
    args = {"service": "wéb-日本 \u2028 \"q\"", "replicas": 3}
    h, ran, _ = _deploy_harness(executor, calls=[args])
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    await h.control(ControlKind.APPROVE, target_id=req.target_id)
    await h.finish()
    expected = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    (decided,) = h.of("approval_decided")
    steps = [s for s in h.of("agent_step") if s.step == "tool_call"]
    assert ran == [args]
    assert [req.args_json, decided.requested_args_json, decided.ran_args_json, *(s.args_json for s in steps)] == [expected] * 4
