"""Notifications: which events are notices, their JSON and terminal escapes, and the
``--notify-cmd`` hook end to end (a real command writing its stdin to a file), in ``serve``."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
from pathlib import Path

import pytest

from goldfive import events as E
from goldfive.control import ControlKind, ControlMessage
from goldfive.notify import Notice, NoticeTracker, NotifyCommand, diff_notices, notice_key, osc777, osc9
from tests.tui.scenario import DemoScript, flatten


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
        command.send(dataclasses.replace(approval, run_id="r2"))  # another run's: not coalesced
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
    from tests.tui.scripted import ScriptedSource

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


def _approval(run_id: str, n: int) -> Notice:
    return Notice(run_id, "approval", f"approval: tool{n}", target_id=f"t{n}", tool_name=f"tool{n}")


async def test_a_burst_from_one_run_does_not_hide_another_runs_approval(tmp_path: Path) -> None:
    out = tmp_path / "notices.jsonl"
    command = NotifyCommand(f"sleep 0.05; cat >> {out}")  # slower than the burst comes
    for n in range(300):
        command.send(_approval("noisy", n))
        if n % 25 == 0:
            await asyncio.sleep(0)  # commands start in between, as they would on a live hub
    command.send(_approval("quiet", 0))
    await command.wait()
    delivered = [json.loads(line) for line in out.read_text().splitlines()]
    quiet = [d for d in delivered if d["run_id"] == "quiet"]
    assert len(quiet) == 1 and quiet[0]["tool_name"] == "tool0" and quiet[0]["count"] == 1
    noisy = [d for d in delivered if d["run_id"] == "noisy"]
    assert sum(d["count"] for d in noisy) == 300  # every approval is in some notice's count
    # The newest is shown by the notice that stands for it. Commands run side by side, so the
    # file holds them in the order they finished, not the order they were handed out.
    assert "tool299" in {d["tool_name"] for d in noisy}
    assert command.received == 301 and command.dropped == 0 and command.sent == len(delivered)
    assert command.coalesced == 301 - len(delivered) and command.warning() == ""
    coalesced = next(d for d in noisy if d["count"] > 1)
    assert coalesced["body"].startswith(f"{coalesced['count']} approvals waiting; newest: approval: tool")
    assert coalesced["counts"] == {"approval": coalesced["count"]}


async def test_the_runs_take_turns_at_the_command(tmp_path: Path) -> None:
    out = tmp_path / "order.jsonl"
    command = NotifyCommand(f"cat >> {out}")
    for n in range(3):  # all sent before any command starts: each run waits once, in order
        for run_id in ("a", "b", "c"):
            command.send(_approval(run_id, n))
    await command.wait()
    delivered = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((d["run_id"], d["count"]) for d in delivered) == [("a", 3), ("b", 3), ("c", 3)]


async def test_past_the_bound_of_waiting_runs_notices_are_dropped_counted_and_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "notices.jsonl"
    command = NotifyCommand(f"cat >> {out}", max_waiting_runs=3)
    with caplog.at_level(logging.WARNING, logger="goldfive.notify"):
        for n in range(10):  # ten runs at once: three wait, seven have no room
            command.send(_approval(f"run{n}", n))
        await command.wait()
    delivered = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(d["run_id"] for d in delivered) == ["run0", "run1", "run2"]  # the first three
    assert command.dropped == 7 and sum(d["count"] for d in delivered) + command.dropped == command.received == 10
    assert command.warning() == "7 notifications dropped: --notify-cmd could not keep up"
    drops = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(drops) == 1 and drops[0].startswith("notify: 1 notices dropped")  # once per interval


async def test_the_hubs_warning_counts_the_notices_it_dropped(tmp_path: Path) -> None:
    from goldfive.remote import RemoteClient, RunHost, start_server
    from goldfive.remote.server import _notices

    host = RunHost(":memory:")
    host.warning = lambda: "database unreachable"
    dispatch = _notices(host, [f"cat >> {tmp_path / 'n.jsonl'}"])
    (command,) = dispatch.commands()
    command.max_waiting_runs = 0  # no room at all: every notice is dropped
    server = await start_server(host, listen="127.0.0.1:0")
    try:
        command.send(_approval("r1", 1))
        client = RemoteClient(server.address)
        async with client:
            await client.list_runs()
        assert client.hub_warning == "database unreachable; 1 notifications dropped: --notify-cmd could not keep up"
    finally:
        await server.stop(None)
        await command.aclose()
