"""ClaudeAgentSDKAdapter through the real Claude Agent SDK and the Claude Code CLI its wheel
bundles, offline: the CLI talks to a scripted Messages API on loopback (tests/adapters/claude_kit.py)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from goldfive.adapters.claude_agent_sdk import ClaudeAgentSDKAdapter, session_id_for
from goldfive.adapters.frameworks import adapter_for
from goldfive.approvals import Outcome, Rule, RuleBook, ledger_of
from goldfive.control import AckResult, ControlKind
from goldfive.executors.sequential import SequentialExecutor
from goldfive.run import RuntimeConfig
from tests.adapters.claude_kit import Block, MessagesServer, claude_children, options, task_of, texts, tool_results
from tests.runtime_kit import Harness, ReplanningPlanner, ack_ok, linear_plan, static

DONE = "mcp__goldfive__report_task_completed"


@pytest.fixture
async def home(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def servers() -> Iterator[list[MessagesServer]]:
    made: list[MessagesServer] = []
    yield made
    for s in made:
        s.close()


def serve(servers: list[MessagesServer], respond: Callable[[dict[str, Any]], list[Block]]) -> MessagesServer:
    server = MessagesServer(respond)
    servers.append(server)
    return server


def reporting(first: Callable[[str, dict[str, Any]], list[Block]] | None = None) -> Callable[[dict[str, Any]], list[Block]]:
    """Per task: ``first(task_id, body)`` (default: report the task done); once a call of the
    task (ids ``<task>-...``) has its result, report the task done with it; then a final text."""

    def respond(body: dict[str, Any]) -> list[Block]:
        task = task_of(body)
        results = tool_results(body)
        if f"done-{task}" in results:
            return [("text", f"finished {task}")]
        own = [text for call, text in results.items() if call.startswith(f"{task}-")]
        if own or first is None:
            return [("tool_use", DONE, {"result": f"{task}: {own[-1][:80]}" if own else f"{task} done"}, f"done-{task}")]
        return first(task, body)

    return respond


def bash(command: str, call_id: str) -> Block:
    return ("tool_use", "Bash", {"command": command, "description": "run it"}, call_id)


# -- a run ---------------------------------------------------------------------------------


async def test_a_run_is_one_claude_session_its_tasks_one_query_each_with_usage_recorded(home: Path, servers: list[MessagesServer]) -> None:
    server = serve(servers, reporting())
    opts = options(server, home)
    adapter = adapter_for(opts)
    assert isinstance(adapter, ClaudeAgentSDKAdapter) and adapter.options is opts
    h = Harness(adapter, SequentialExecutor(), static("t1", "t2"))
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    assert out.session.completed_results == {"t1": "t1 done", "t2": "t2 done"}
    t2_first = next(b for b in server.requests if task_of(b) == "t2")
    assert any("Do the current task (t1)" in t for t in texts(t2_first))  # the conversation went on
    usage = adapter.usage(out.session)
    assert [u.task_id for u in usage] == ["t1", "t2"]
    assert {u.session_id for u in usage} == {session_id_for(out.session.run_id)}
    assert all(u.input_tokens > 0 and u.output_tokens > 0 and (u.cost_usd or 0) > 0 for u in usage)
    # Claude Code's total_cost_usd is its process's running total; cost_usd is the query's own
    assert usage[1].total_cost_usd == pytest.approx((usage[0].cost_usd or 0) + (usage[1].cost_usd or 0))
    steps = [s for s in h.of("agent_step") if s.step == "usage"]
    assert [json.loads(s.args_json)["task_id"] for s in steps] == ["t1", "t2"]
    # and on the run's usage ledger, with Claude Code's own cost (source "reported")
    recorded = h.of("usage_recorded")
    assert [(r.task_id, r.source, r.cost_source) for r in recorded] == [("t1", "claude_agent_sdk", "reported"), ("t2", "claude_agent_sdk", "reported")]
    assert [r.cost_usd for r in recorded] == pytest.approx([u.cost_usd for u in usage])
    assert all(r.input_tokens >= u.input_tokens > 0 and r.output_tokens == u.output_tokens for r, u in zip(recorded, usage))
    assert [s.tool_name for s in h.of("agent_step") if s.step == "hook"][:1] == ["PreToolUse"]
    assert claude_children() == []  # the run's Claude Code ended with it


# -- permissions are goldfive tool approvals ------------------------------------------------------


def touching(name: str) -> Callable[[str, dict[str, Any]], list[Block]]:
    return lambda task, body: [bash(f"touch {name}", f"{task}-bash")]


async def test_a_permission_is_a_tool_approval_and_approve_lets_the_tool_run(home: Path, servers: list[MessagesServer]) -> None:
    server = serve(servers, reporting(touching("approved.txt")))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (req.target_id, req.kind, req.tool_name, req.task_id) == ("t1-bash", "tool", "Bash", "t1")
    assert json.loads(req.args_json) == {"command": "touch approved.txt", "description": "run it"}
    assert not (home / "approved.txt").exists()
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="t1-bash"))
    out = await h.finish()
    assert out.success, out.reason
    assert (home / "approved.txt").exists()
    [step] = [s for s in h.of("agent_step") if s.step == "tool_call" and s.tool_name == "Bash"]
    assert (step.call_id, step.outcome) == ("t1-bash", "ok")
    [entry] = ledger_of(h.sink.events)
    assert (entry.target_id, entry.outcome, entry.ran_args) == ("t1-bash", Outcome.APPROVED, json.loads(req.args_json))


async def test_reject_denies_the_call_and_the_model_reads_the_reason(home: Path, servers: list[MessagesServer]) -> None:
    server = serve(servers, reporting(touching("rejected.txt")))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="t1-bash", detail="not in my home directory"))
    out = await h.finish()
    assert out.success and not (home / "rejected.txt").exists()
    seen = tool_results(server.requests[-1])["t1-bash"]
    assert "The user rejected the call to Bash: not in my home directory" in seen
    [step] = [s for s in h.of("agent_step") if s.step == "tool_call" and s.tool_name == "Bash"]
    assert step.outcome == "rejected"
    assert ledger_of(h.sink.events)[0].outcome == Outcome.REJECTED


async def test_edited_arguments_are_the_updated_input_the_tool_runs_with(home: Path, servers: list[MessagesServer]) -> None:
    server = serve(servers, reporting(touching("asked.txt")))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested")
    edited = {"command": "touch edited.txt", "description": "run it"}
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="t1-bash", arguments=edited))
    out = await h.finish()
    assert out.success
    assert (home / "edited.txt").exists() and not (home / "asked.txt").exists()
    [step] = [s for s in h.of("agent_step") if s.step == "tool_call" and s.tool_name == "Bash"]
    assert json.loads(step.args_json) == edited
    assert any("A person edited this call's input" in t for t in texts(server.requests[-1]))
    assert ledger_of(h.sink.events)[0].outcome == Outcome.EDITED_APPROVED


async def test_an_always_rule_answers_before_anyone_is_asked_unless_the_tool_is_never_auto(home: Path, servers: list[MessagesServer]) -> None:
    server = serve(servers, reporting(touching("ruled.txt")))
    config = RuntimeConfig(approval_rules=RuleBook("run", [Rule("Bash")]))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"), config=config)
    h.start()
    out = await h.finish()
    assert out.success and (home / "ruled.txt").exists() and h.of("approval_requested") == []
    assert ledger_of(h.sink.events)[0].outcome == Outcome.APPROVED_BY_RULE

    server = serve(servers, reporting(touching("guarded.txt")))
    config = RuntimeConfig(approval_rules=RuleBook("run", [Rule("Bash")], never_auto=["Bash"]))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"), config=config)
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="t1-bash"))
    out = await h.finish()
    assert out.success and not (home / "guarded.txt").exists()


# -- the budget -----------------------------------------------------------------------------


def three_calls(body: dict[str, Any]) -> list[Block]:
    """t1 touches a.txt, b.txt and c.txt, one call each, then reports done."""
    results = tool_results(body)
    if "done-t1" in results:
        return [("text", "finished t1")]
    for done, then in (("t1-c", None), ("t1-b", "c"), ("t1-a", "b")):
        if done in results:
            return [("tool_use", DONE, {"result": "t1 done"}, "done-t1")] if then is None else [bash(f"touch {then}.txt", f"t1-{then}")]
    return [bash("touch a.txt", "t1-a")]


async def test_over_budget_a_tool_call_is_held_in_pre_tool_use_and_denied_before_the_hook_would_time_out(
    home: Path, servers: list[MessagesServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldfive.adapters.claude_agent_sdk import turn
    from goldfive.budget import Budget
    from goldfive.testing import until

    server = serve(servers, three_calls)
    config = RuntimeConfig(approval_rules=RuleBook("run", [Rule("Bash")]), budget=Budget(tool_calls=1))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"), config=config)
    h.start()
    reached = (await h.wait_event("budget_reached")).budget_reached
    assert reached.detail == "tool_calls 1 of 1" and (home / "a.txt").exists()
    await until(lambda: any(s.step == "hook" and s.tool_name == "PreToolUse" and s.call_id == "t1-b" for s in h.of("agent_step")))
    asked = len(server.requests)
    await asyncio.sleep(0.2)  # held: the call does not run, Claude is not asked again
    assert not (home / "b.txt").exists() and len(server.requests) == asked
    # The next hold ends (as it would just before the hook's timeout) in a denial that says why.
    monkeypatch.setattr(turn, "BUDGET_HOLD_MARGIN_S", turn.PRE_TOOL_TIMEOUT_S - 0.2)
    assert ack_ok(await h.control(ControlKind.BUDGET, tool_calls=2, resume=True))
    await until(lambda: (home / "b.txt").exists())
    seen = await until(lambda: next((tool_results(b)["t1-c"] for b in server.requests if "t1-c" in tool_results(b)), ""))
    assert "budget reached, tool_calls 2 of 2: goldfive held this call for 0 s and nobody raised the budget; it was not run" in seen
    assert not (home / "c.txt").exists()
    assert ack_ok(await h.control(ControlKind.BUDGET, tool_calls=10, resume=True))
    out = await h.finish()
    assert out.success, out.reason
    assert not (home / "c.txt").exists()


async def test_ask_user_question_is_a_question_whose_answer_claude_reads(home: Path, servers: list[MessagesServer]) -> None:
    question = {"questions": [{"question": "Deploy now?", "header": "Deploy", "multiSelect": False,
                               "options": [{"label": "Yes", "description": "go"}, {"label": "No", "description": "wait"}]}]}  # fmt: skip
    server = serve(servers, reporting(lambda task, body: [("tool_use", "AskUserQuestion", question, f"{task}-ask")]))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    req = (await h.wait_event("approval_requested")).approval_requested
    assert (req.kind, req.prompt, req.target_id) == ("question", "Deploy now? (Yes / No)", "t1-ask")
    assert ack_ok(await h.control(ControlKind.REJECT, target_id="t1-ask", detail="after the freeze"))
    out = await h.finish()
    assert out.success
    assert '"Deploy now?"="no: after the freeze"' in tool_results(server.requests[-1])["t1-ask"]


async def test_ask_user_question_offers_its_options_and_claude_reads_the_answer_picked_or_typed(home: Path, servers: list[MessagesServer]) -> None:
    question = {"questions": [{"question": "Deploy now?", "header": "Deploy", "multiSelect": False,
                               "options": [{"label": "Yes", "description": "go"}, {"label": "No", "description": "wait"}]},
                              {"question": "Which region?", "header": "Region", "multiSelect": False,
                               "options": [{"label": "eu", "description": ""}, {"label": "us", "description": ""}]}]}  # fmt: skip
    server = serve(servers, reporting(lambda task, body: [("tool_use", "AskUserQuestion", question, f"{task}-ask")]))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    first = (await h.wait_event("question_asked")).question_asked
    assert (first.target_id, first.prompt, list(first.options), first.free_text) == ("t1-ask", "Deploy now? (Yes / No)", ["Yes", "No"], True)
    refused = await h.control(ControlKind.ANSWER, target_id="t1-ask", option="Maybe")
    assert refused.result is AckResult.FAILURE and "option 'Maybe' was not offered" in refused.detail
    assert ack_ok(await h.control(ControlKind.ANSWER, target_id="t1-ask", option="Yes"))
    second = (await h.wait_event("question_asked", lambda q: q.target_id == "t1-ask#2")).question_asked
    assert list(second.options) == ["eu", "us"]
    assert ack_ok(await h.control(ControlKind.ANSWER, target_id="t1-ask#2", text="eu-west-1 only"))
    out = await h.finish()
    assert out.success
    said = tool_results(server.requests[-1])["t1-ask"]
    assert '"Deploy now?"="Yes"' in said and '"Which region?"="eu-west-1 only"' in said
    assert [e.outcome for e in ledger_of(h.sink.events)] == [Outcome.ANSWERED, Outcome.ANSWERED]



async def test_goldfives_ask_person_tool_is_offered_to_claude_and_claude_reads_the_answer(home: Path, servers: list[MessagesServer]) -> None:
    ask = {"prompt": "Which region?", "options": ["eu", "us"], "free_text": False}
    server = serve(servers, reporting(lambda task, body: [("tool_use", "mcp__goldfive__ask_person", ask, f"{task}-ask")]))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    asked = (await h.wait_event("question_asked")).question_asked
    assert (asked.prompt, list(asked.options), asked.free_text, asked.task_id) == ("Which region?", ["eu", "us"], False, "t1")
    assert ack_ok(await h.control(ControlKind.ANSWER, target_id=asked.target_id, option="us"))
    out = await h.finish()
    assert out.success
    assert json.loads(tool_results(server.requests[-1])["t1-ask"]) == {"ok": True, "answer": "us", "option": "us"}


async def test_subagent_hooks_become_hook_steps(home: Path, servers: list[MessagesServer]) -> None:
    def respond(body: dict[str, Any]) -> list[Block]:
        if not task_of(body):  # the subagent's own model call
            return [("text", "three files nobody uses")]
        if "t1-agent" in tool_results(body):
            return [("text", "done")]
        return [("tool_use", "Agent", {"description": "look", "prompt": "find unused files", "subagent_type": "general-purpose"}, "t1-agent")]

    server = serve(servers, respond)
    h = Harness(ClaudeAgentSDKAdapter(options(server, home, allowed_tools=["Agent"])), SequentialExecutor(), static("t1"))
    h.start()
    out = await h.finish()
    assert out.success, out.reason
    hooks = [(s.tool_name, s.text) for s in h.of("agent_step") if s.step == "hook"]
    assert ("SubagentStart", "general-purpose started") in hooks
    assert ("SubagentStop", "general-purpose stopped: three files nobody uses") in hooks


async def test_without_memory_each_task_is_a_session_of_its_own(home: Path, servers: list[MessagesServer]) -> None:
    server = serve(servers, reporting())
    adapter = ClaudeAgentSDKAdapter(options(server, home), memory=False)
    h = Harness(adapter, SequentialExecutor(), static("t1", "t2"))
    h.start()
    out = await h.finish()
    assert out.success
    t2_first = next(b for b in server.requests if task_of(b) == "t2")
    assert not any("Do the current task (t1)" in t for t in texts(t2_first))
    assert len({u.session_id for u in adapter.usage(out.session)}) == 2 and claude_children() == []

# -- injected messages, cancel, steer -------------------------------------------------------------


async def test_an_injected_message_goes_into_the_running_turn(home: Path, servers: list[MessagesServer]) -> None:
    server = serve(servers, reporting(touching("a.txt")))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested")  # Claude Code waits for the permission
    assert ack_ok(await h.control(ControlKind.INJECT_MESSAGE, text="use the staging bucket"))
    await h.wait_event("message_parked")
    assert ack_ok(await h.control(ControlKind.APPROVE, target_id="t1-bash"))
    out = await h.finish()
    assert out.success
    after = server.requests[1]  # the model call right after the tool ran
    assert any("[user_steering]use the staging bucket[/user_steering]" in t for t in texts(after))
    assert not any("staging bucket" in t for t in texts(server.requests[0]))
    [delivered] = h.of("message_delivered")
    assert delivered.lane == "t1" and h.of("message_returned") == []


async def _held_first_call(home: Path, servers: list[MessagesServer], planner: Any) -> tuple[Harness, MessagesServer]:
    server = serve(servers, reporting())
    server.hold(0)
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), planner)
    h.start()
    await asyncio.wait_for(server.arrived(0).wait(), 30)
    return h, server


async def test_cancel_interrupts_the_query_within_the_grace_period_and_leaves_no_process(home: Path, servers: list[MessagesServer]) -> None:
    h, server = await _held_first_call(home, servers, static("t1", "t2"))
    begun = time.monotonic()
    assert ack_ok(await h.control(ControlKind.CANCEL, reason="wrong repo"))
    out = await h.finish()
    assert time.monotonic() - begun < 5.0  # the default grace period
    assert not out.success and "wrong repo" in out.reason
    assert [c.task_id for c in h.of("task_cancelled")][:1] == ["t1"] and h.of("invocation_abandoned") == []
    [usage] = [s for s in h.of("agent_step") if s.step == "usage"]  # the interrupted query's, recorded too
    assert json.loads(usage.args_json)["is_error"] is True
    assert claude_children() == []
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_steer_interrupts_and_the_next_task_goes_on_in_the_same_conversation(home: Path, servers: list[MessagesServer]) -> None:
    h, server = await _held_first_call(home, servers, ReplanningPlanner(linear_plan("t1", "t2")))
    assert ack_ok(await h.control(ControlKind.STEER, note="smaller steps"))
    out = await h.finish()
    assert out.success, out.reason
    assert h.of("task_cancelled")[0].task_id == "t1"
    replanned = next(b for b in server.requests if task_of(b) == "r1_1")
    seen = "\n".join(texts(replanned))
    assert "Do the current task (t1)" in seen and "[Request interrupted by user]" in seen
    assert claude_children() == []


async def test_a_cancel_while_a_permission_waits_withdraws_it(home: Path, servers: list[MessagesServer]) -> None:
    from goldfive.run.approvals import WITHDRAWN

    server = serve(servers, reporting(touching("never.txt")))
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    await h.wait_event("approval_requested")
    assert ack_ok(await h.control(ControlKind.CANCEL, reason="stop"))
    out = await h.finish()
    assert not out.success and not (home / "never.txt").exists()
    assert [(r.target_id, r.detail) for r in h.of("approval_rejected")] == [("t1-bash", WITHDRAWN)]
    assert h.runner.session.pending_approvals == {} and claude_children() == []


# -- the session goes on across processes -----------------------------------------------------------


async def test_a_resumed_run_continues_its_claude_session(home: Path, servers: list[MessagesServer]) -> None:
    server = serve(servers, reporting())
    first = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"), extra={"run_id": "run-a"})
    first.start()
    assert (await first.finish()).success
    # Another process goes on with the same run (as goldfive resume does): a new adapter and client.
    again = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t2"), extra={"run_id": "run-a"})
    again.start()
    out = await again.finish()
    assert out.success, out.reason
    resumed = next(b for b in server.requests if task_of(b) == "t2")
    assert any("Do the current task (t1)" in t for t in texts(resumed))
    usage = ClaudeAgentSDKAdapter.usage(again.runner.adapter, out.session)
    assert [u.session_id for u in usage] == [session_id_for("run-a")]


# -- goldfive run -------------------------------------------------------------------------------------


def test_goldfive_run_takes_claude_agent_options_as_they_are(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import examples.claude_agent as example
    from goldfive.cli import main

    async def start() -> MessagesServer:
        return MessagesServer(reporting())

    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(start())
    try:
        monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path / "data"))
        monkeypatch.setattr(example, "agent", options(server, home))
        result = CliRunner().invoke(
            main, ["run", "examples.claude_agent:agent", "--goal", "tidy", "--plan", "examples/claude_plan.json", "--headless"]
        )
    finally:
        server.close()
        loop.close()
    assert result.exit_code == 0, result.output
    assert "2/2 tasks completed" in result.output
    assert "look usage" in result.output and "PreToolUse" in result.output


def test_claude_is_offered_the_reporting_tools_without_report_task_started() -> None:
    from goldfive.adapters.claude_agent_sdk.tools import allowed_names

    names = allowed_names()
    assert DONE in names and "mcp__goldfive__report_task_started" not in names


async def test_goldfives_reporting_tools_are_in_the_models_request_not_deferred_behind_tool_search(
    home: Path, servers: list[MessagesServer]
) -> None:
    # Claude Code defers MCP tools behind its ToolSearch by default: a deferred tool is not in the
    # request (or is marked defer_loading), so the model would never see report_task_failed.
    server = serve(servers, reporting())
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"))
    h.start()
    assert (await h.finish()).success
    first = next(b for b in server.requests if task_of(b) == "t1")
    offered = {t["name"]: t for t in first.get("tools") or []}
    from goldfive.adapters.claude_agent_sdk.tools import allowed_names

    for name in allowed_names():
        assert name in offered, f"{name} not in the model's request"
        assert not offered[name].get("defer_loading"), f"{name} deferred behind tool search"


@pytest.mark.parametrize("with_control", [True, False])
async def test_ask_user_question_is_offered_only_when_a_person_can_answer(
    home: Path, servers: list[MessagesServer], with_control: bool
) -> None:
    server = serve(servers, reporting())
    h = Harness(ClaudeAgentSDKAdapter(options(server, home)), SequentialExecutor(), static("t1"), with_control=with_control)
    h.start()
    assert (await h.finish()).success
    offered = {t["name"] for t in next(b for b in server.requests if task_of(b) == "t1").get("tools") or []}
    assert ("AskUserQuestion" in offered) == with_control
    assert "Bash" in offered  # the agent's own tools stay
