"""Notifications: which events are notices, their JSON and terminal escapes, and the
``--notify-cmd`` hook end to end (a real command writing its stdin to a file), in ``serve``."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

import pytest

from goldfive import events as E
from goldfive.control import ControlKind, ControlMessage
from goldfive.notify import Notice, NoticeTracker, NotifyCommand, diff_notices, notice_key, osc777, osc9
from goldfive_tui.scenario import DemoScript, flatten


def _story(kind: str) -> list:  # type: ignore[type-arg]
    script = DemoScript(run_id="r1")
    steps = [script.opening()]
    if kind == "approval":
        steps.append(script.to_approval(task="draft"))
    elif kind == "finished":
        steps += [script.to_approval(task="draft"), script.finish()]
    elif kind == "failed":
        steps.append([script._at(100, E.run_aborted, "agent raised RuntimeError: kaboom")])
    elif kind == "escalation":
        steps.append(script.control(ControlMessage(kind=ControlKind.GOLDFIVE_PAUSE_ESCALATE, payload={})))
    elif kind == "paused":
        steps.append(script.control(ControlMessage(kind=ControlKind.PAUSE, payload={})))
    return flatten(*steps)


def _notices(kind: str) -> list[Notice]:
    tracker = NoticeTracker()
    return [n for ev in _story(kind) for n in tracker.feed(ev)]


def test_an_approval_an_escalation_and_a_failure_are_notices() -> None:
    (approval,) = _notices("approval")
    assert (approval.run_id, approval.kind, approval.tool_name, approval.target_id) == ("r1", "approval", "publish_deck", "publish_deck")
    assert "Publish the deck" in approval.body and "r1" in approval.title
    (escalation,) = _notices("escalation")
    assert escalation.kind == "escalation" and escalation.reason.startswith("escalation:")
    (failed,) = _notices("failed")
    assert failed.kind == "failed" and "kaboom" in failed.reason


def test_completion_and_a_persons_pause_are_not_notices() -> None:
    assert [n.kind for n in _notices("finished")] == ["approval"]  # only the approval on the way
    assert _notices("paused") == []
    assert _notices("opening") == []


def test_notice_json_says_which_run_and_what_it_waits_for() -> None:
    (approval,) = _notices("approval")
    data = json.loads(approval.to_json())
    assert data["run_id"] == "r1" and data["kind"] == "approval" and data["tool_name"] == "publish_deck"
    assert data["title"] == approval.title and "publish_deck" in data["body"]


def test_osc_strings_are_single_escapes_without_control_characters() -> None:
    n = Notice("r1", "approval", "approval: x\x07;\x1b]evil", prompt="line one\nline two")
    for text, head in ((osc9(n), "\x1b]9;"), (osc777(n), "\x1b]777;notify;")):
        assert text.startswith(head) and text.endswith("\x07")
        body = text[len(head) : -1]
        assert "\x07" not in body and "\x1b" not in body and "\n" not in body
    assert osc777(n).count(";") >= 3 and "line one line two" in osc777(n)


def test_diff_notices_baseline_then_only_new_ones() -> None:
    a, b = Notice("r1", "approval", "approval: a", target_id="a"), Notice("r2", "failed", "failed")
    assert diff_notices(None, [a]) == []
    assert diff_notices({notice_key(a)}, [a, b]) == [b]


async def test_notify_command_gets_the_notice_json_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "notices.jsonl"
    command = NotifyCommand(f"cat >> {out}")
    (approval,) = _notices("approval")
    command.send(approval)  # returns at once: the command runs in the background
    await command.wait()
    (line,) = out.read_text().splitlines()
    assert json.loads(line)["tool_name"] == "publish_deck" and command.failures == 0


async def test_a_failing_command_is_logged_once_and_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    command = NotifyCommand(f"{sys.executable} -c 'import sys; sys.stdin.read(); sys.exit(3)'")
    (approval,) = _notices("approval")
    with caplog.at_level(logging.WARNING, logger="goldfive.notify"):
        command.send(approval)
        command.send(approval)
        await command.wait()
    assert command.failures == 2
    assert len([r for r in caplog.records if "exited 3" in r.getMessage()]) == 1


async def test_serve_notify_cmd_runs_the_command_for_a_hosted_runs_approval(tmp_path: Path) -> None:
    from goldfive.remote.launch import demo_run as _demo_run
    from goldfive.remote.server import RemoteServer, serve

    out = tmp_path / "notices.jsonl"
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[RemoteServer] = loop.create_future()
    task = loop.create_task(
        serve("127.0.0.1:0", db_path=str(tmp_path / "runs.sqlite"), runs=[_demo_run(40.0)], ready=ready, notify_cmd=f"cat >> {out}")
    )
    try:
        server = await asyncio.wait_for(ready, 30)
        (run,) = server.host.runs()
        for _ in range(600):  # the demo at 40x reaches its publish approval in about a second
            if out.exists() and out.read_text().strip():
                break
            await asyncio.sleep(0.05)
        (line,) = out.read_text().splitlines()
        notice = json.loads(line)
        assert notice["run_id"] == run.run_id and notice["kind"] == "approval" and notice["tool_name"] == "publish_deck"
        assert "Publish the 8-slide deck" in notice["body"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_attach_with_run_id_tells_the_command_only_of_news(tmp_path: Path) -> None:
    from goldfive_tui.runs.launch import with_notices
    from goldfive_tui.source import ScriptedSource

    events = _story("approval")
    approval_seq = next(ev.sequence for ev in events if ev.WhichOneof("payload") == "approval_requested")
    for after, expected in ((approval_seq - 1, 1), (approval_seq, 0)):  # history up to `after` is old
        out = tmp_path / f"after{after}.jsonl"
        source = with_notices(ScriptedSource(events), f"cat >> {out}", after)
        await source.start()
        seen = [ev async for ev in source.events()]
        await source.stop()  # waits for the commands
        assert len(seen) == len(events)
        assert (len(out.read_text().splitlines()) if out.exists() else 0) == expected
