"""The built-in demo scenario: headless runs, a STEER that replans visibly, approvals, the CLI."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import sys
import time
from typing import Any

import pytest
from click.testing import CliRunner

from goldfive import events
from goldfive.adapters.llm_agent import LLMAgentAdapter
from goldfive.cli import main
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.demo import AGENT_ANSWER_DELAY_S, DEMO_GOAL, make_demo_runner, publish_deck, run_headless
from goldfive.results import ExecutionOutcome
from goldfive.sinks.memory import InMemorySink

FAST = 50.0


async def _drive(
    *, approvals: str = "approve", steer_after: str = "", note: str = "", **kw: Any
) -> tuple[ExecutionOutcome, list[Any]]:
    """Run the demo; answer approvals; send a STEER when ``steer_after`` completes."""
    sink, channel = InMemorySink(), ControlChannel()
    runner = make_demo_runner(sinks=[sink], control=channel, speed=FAST, **kw)
    decide = ControlKind.APPROVE if approvals == "approve" else ControlKind.REJECT

    async def react() -> None:
        async for ev in sink.subscribe():
            kind = events.kind_of(ev)
            if kind == "approval_requested":
                await channel.send(ControlMessage(decide, payload={"target_id": ev.approval_requested.target_id}))
            elif kind == "task_completed" and ev.task_completed.task_id == steer_after:
                await channel.send(ControlMessage(ControlKind.STEER, payload={"note": note}))

    watcher = asyncio.create_task(react())
    try:
        outcome = await asyncio.wait_for(runner.run(DEMO_GOAL), 20)
        await watcher
    finally:
        watcher.cancel()
        channel.close()
        await runner.close()
    return outcome, sink.events


def _of(evs: list[Any], kind: str) -> list[Any]:
    return [getattr(e, kind) for e in evs if events.kind_of(e) == kind]


async def test_a_headless_run_completes_all_five_tasks_and_exits_0() -> None:
    out = io.StringIO()
    started = time.monotonic()
    code = await run_headless(speed=FAST, out=out)
    elapsed = time.monotonic() - started
    lines = out.getvalue().splitlines()
    assert code == 0
    assert elapsed < 3
    assert "run_completed" in lines[-1] and "5/5 tasks completed" in lines[-1]
    done = [ln.split()[2] for ln in lines if ln.split()[1] == "task_completed"]
    assert done == ["research", "outline", "draft", "review", "publish"]
    assert any(ln.split()[1] == "task_progress" for ln in lines)
    assert [ln.split()[1] for ln in lines].count("approval_granted") == 1
    seqs = [int(ln.split()[0]) for ln in lines]
    assert seqs == sorted(set(seqs))
    # One line per control, as the TUI's log shows it (issue 23): its received and its ack
    # make one line, at the ack; every other event has its own line.
    controls = [ln for ln in lines if ln.split()[1] == "control"]
    assert len(controls) == 1 and "APPROVE" in controls[0] and "by headless" in controls[0] and "→ SUCCESS as DECIDED" in controls[0], controls
    assert not any(ln.split()[1] in ("control_received", "control_acked") for ln in lines)
    assert len(lines) == seqs[-1] + 1 - len(controls)


async def test_the_demo_runs_on_the_llm_code_path() -> None:
    outcome, evs = await _drive()
    assert outcome.success
    runner_tasks = [t.id for t in _of(evs, "plan_submitted")[0].plan.tasks]
    assert runner_tasks == ["research", "outline", "draft", "review", "publish"]
    assert _of(evs, "goal_derived")[0].goals[0].summary == DEMO_GOAL
    assert [c.task_id for c in _of(evs, "task_completed")] == runner_tasks
    assert "collected 5 key facts" in _of(evs, "task_completed")[0].result_summary
    assert "reviewed the draft" in _of(evs, "task_completed")[3].result_summary


async def test_a_steer_after_research_replans_with_the_notes_words_and_completes() -> None:
    outcome, evs = await _drive(steer_after="research", note="focus on fewer slides")
    assert outcome.success, outcome.reason
    [revised] = _of(evs, "plan_revised")
    titles = [t.title for t in revised.plan.tasks if t.id in set(revised.diff.added_task_ids)]
    assert titles and all("fewer slides" in t for t in titles)
    assert revised.plan.revision_index == 1
    assert "research" in [t.id for t in revised.plan.tasks]  # completed work is kept
    completed = [c.task_id for c in _of(evs, "task_completed")]
    assert completed[0] == "research" and len(completed) > 1
    assert set(completed[1:]) <= set(revised.diff.added_task_ids)
    assert events.kind_of(evs[-1]) == "run_completed"


async def test_approving_publish_deck_publishes() -> None:
    outcome, evs = await _drive(approvals="approve")
    assert outcome.success
    [req] = _of(evs, "approval_requested")
    assert req.tool_name == "publish_deck" and req.task_id == "publish" and '"slides": 8' in req.args_json
    assert [g.target_id for g in _of(evs, "approval_granted")] == [req.target_id]
    assert "https://decks.example.com/eng/" in _of(evs, "task_completed")[-1].result_summary


async def test_rejecting_publish_deck_still_completes_saying_publishing_was_rejected() -> None:
    outcome, evs = await _drive(approvals="reject")
    assert outcome.success
    [req] = _of(evs, "approval_requested")
    assert [r.target_id for r in _of(evs, "approval_rejected")] == [req.target_id]
    last = _of(evs, "task_completed")[-1]
    assert last.task_id == "publish" and "publishing was rejected" in last.result_summary


async def test_speed_2_halves_the_offline_models_delay() -> None:
    runner = make_demo_runner(speed=2)
    model = runner.adapter.model
    assert model.delay_s * model.speed == pytest.approx(AGENT_ANSWER_DELAY_S / 2)
    assert isinstance(runner.adapter, LLMAgentAdapter)
    with pytest.raises(ValueError, match="speed"):
        make_demo_runner(speed=0)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_with_an_unreachable_model_server_the_run_aborts_naming_the_url() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    outcome, evs = await _drive(base_url=url, model="some-model")
    assert not outcome.success
    assert url in outcome.reason
    assert events.kind_of(evs[-1]) == "run_aborted"


def test_publish_deck_returns_a_url() -> None:
    assert publish_deck("Slides about Python", 8, "eng") == {
        "ok": True,
        "url": "https://decks.example.com/eng/slides-about-python",
        "slides": 8,
    }


def test_cli_demo_headless_exits_0() -> None:
    result = CliRunner().invoke(main, ["demo", "--headless", "--speed", "50"])
    assert result.exit_code == 0, result.output
    assert "run_completed" in result.output.splitlines()[-1]


def test_cli_demo_headless_reject_still_exits_0() -> None:
    result = CliRunner().invoke(main, ["demo", "--headless", "--speed", "50", "--approvals", "reject"])
    assert result.exit_code == 0, result.output
    assert "approval_rejected" in result.output


def test_cli_demo_without_a_tui_front_end_says_so_and_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    import goldfive.cli

    monkeypatch.setattr(goldfive.cli.frontends, "FRONTENDS", {})  # the core alone: no TUI registered
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 2
    assert "--headless" in result.output


def test_cli_demo_rejects_a_non_positive_speed() -> None:
    result = CliRunner().invoke(main, ["demo", "--headless", "--speed", "0"])
    assert result.exit_code == 2 and "--speed" in result.output


async def test_a_steer_mid_task_cancels_it_and_an_injected_message_reaches_the_next_turn() -> None:
    sink, channel = InMemorySink(), ControlChannel()
    runner = make_demo_runner(sinks=[sink], control=channel, speed=FAST)

    async def react() -> None:
        async for ev in sink.subscribe():
            kind = events.kind_of(ev)
            if kind == "task_progress" and ev.task_progress.task_id == "outline":
                await channel.send(ControlMessage(ControlKind.STEER, payload={"note": "focus on fewer slides"}))
                await channel.send(ControlMessage(ControlKind.INJECT_MESSAGE, payload={"text": "keep it short"}))
            elif kind == "approval_requested":
                await channel.send(ControlMessage(ControlKind.APPROVE, payload={"target_id": ev.approval_requested.target_id}))

    watcher = asyncio.create_task(react())
    try:
        outcome = await asyncio.wait_for(runner.run(DEMO_GOAL), 20)
        await watcher
    finally:
        channel.close()
        await runner.close()
    evs = sink.events
    assert outcome.success, outcome.reason
    assert [(c.task_id, c.reason) for c in _of(evs, "task_cancelled")] == [("outline", "user_steer")]
    [delivered] = _of(evs, "message_delivered")
    assert delivered.via == "next_turn"
    first_after = _of(evs, "task_completed")[1]
    assert first_after.task_id == delivered.lane and "keep it short" in first_after.result_summary
    assert "5 slides" in first_after.result_summary  # the steer's "fewer" reached the agent


async def test_given_a_base_url_and_model_the_demo_runs_against_that_server() -> None:
    from tests.fake_openai_server import FakeChatServer, Reply, chat_answer

    goals = {"goals": [{"id": "g1", "summary": DEMO_GOAL}]}
    ids = ["research", "outline", "draft", "review", "publish"]
    plan = {
        "summary": "deck",
        "tasks": [{"id": i, "title": i.title(), "description": ""} for i in ids],
        "edges": [{"from_task_id": a, "to_task_id": b} for a, b in zip(ids, ids[1:])],
    }
    replies = [Reply(body=chat_answer(json.dumps(goals))), Reply(body=chat_answer(json.dumps(plan)))]
    with FakeChatServer(replies) as server:  # then every agent turn gets a plain "ok"
        outcome, evs = await _drive(base_url=server.base_url, model="served-model", api_key="sk-x")
    assert outcome.success, outcome.reason
    assert [c.result_summary for c in _of(evs, "task_completed")] == ["ok"] * 5
    assert len(server.requests) == 7
    assert {r.body["model"] for r in server.requests} == {"served-model"}
    agent_tools = {t["function"]["name"] for t in server.requests[2].body["tools"]}
    assert "publish_deck" in agent_tools and "report_task_completed" in agent_tools


async def test_the_publish_approval_asks_a_question_about_the_deck():
    from goldfive import ControlChannel, InMemorySink
    from goldfive.demo import DEMO_GOAL, make_demo_runner

    sink, channel = InMemorySink(), ControlChannel()
    runner = make_demo_runner(sinks=[sink], control=channel, speed=200)
    sub = sink.subscribe()
    import asyncio

    run = asyncio.create_task(runner.run(DEMO_GOAL))
    async for ev in sub:
        if ev.WhichOneof("payload") == "approval_requested":
            request = ev.approval_requested
            break
    assert request.prompt == "Publish the 8-slide deck to the eng team site?"
    run.cancel()
    try:
        await run
    except asyncio.CancelledError:
        pass
    await runner.close()


@pytest.mark.parametrize(("note", "slides"), [("only 3 slides", 3), ("make it three slides", 3), ("focus on fewer slides", 5)])
async def test_after_a_steer_naming_a_slide_count_the_publish_approval_asks_for_that_deck(note: str, slides: int) -> None:
    outcome, evs = await _drive(steer_after="research", note=note)
    assert outcome.success, outcome.reason
    [req] = _of(evs, "approval_requested")
    assert req.prompt == f"Publish the {slides}-slide deck to the eng team site?"
    assert json.loads(req.args_json)["slides"] == slides
    assert f"published the {slides}-slide deck" in _of(evs, "task_completed")[-1].result_summary


def test_cli_demo_headless_with_approvals_wait_is_refused_with_the_way_to_answer() -> None:
    result = CliRunner().invoke(main, ["demo", "--headless", "--approvals", "wait"])
    assert result.exit_code == 2
    assert "would wait forever" in result.output and "goldfive serve demo" in result.output
    assert "goldfive ctl 127.0.0.1:7531 approve RUN ID" in " ".join(result.output.split())
