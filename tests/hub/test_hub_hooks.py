"""`goldfive hook claude-code` against a real hub: each hook event is one `goldfive hook`
process fed Claude Code's hook JSON, as Claude Code runs it. The session is a run on the hub;
a call a person decides waits in the hub's queue and is answered in Claude Code's own JSON."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.remote.server import RemoteServer
from tests.hub.conftest import ROOT, until

OP = "operator-token-0123456789"
R1 = "runner-one-0123456789xx"
R2 = "runner-two-0123456789xx"
SESSION = "0b2f6a1e-5c1d-4b8e-9f00-000000000001"
#: A `goldfive hook` process's round trip, its start included: its imports alone took 4-7 s on
#: this two-core machine at load 10 (under 1 s idle), so a wait for what it reports allows this.
PROCESS_S = 60.0


@pytest.fixture
async def hub(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = await start_server(
        RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0", token="alice=" + OP, runner_token=["r1=" + R1, "r2=" + R2]
    )
    yield server
    await server.stop(None)


async def hook(addr: str | None, data: dict[str, Any], *args: str, token: str = R1, wait: bool = True) -> Any:
    """One `goldfive hook claude-code` process, as Claude Code runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GOLDFIVE_HUB_TOKEN": token}
    env.pop("GOLDFIVE_TOKEN", None)
    env.pop("GOLDFIVE_HUB", None)
    if addr is not None:
        env["GOLDFIVE_HUB"] = addr
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "goldfive.cli", "hook", "claude-code", *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    data = {"session_id": SESSION, "cwd": "/work/project", "transcript_path": "/tmp/t.jsonl", **data}
    communicate = proc.communicate(json.dumps(data).encode())
    if not wait:
        return proc, asyncio.ensure_future(communicate)
    out, err = await asyncio.wait_for(communicate, PROCESS_S)
    assert proc.returncode == 0, err
    return (json.loads(out) if out.strip() else None), err.decode()


def _tool(tool_use_id: str, command: str, event: str = "PreToolUse") -> dict[str, Any]:
    return {"hook_event_name": event, "tool_name": "Bash", "tool_use_id": tool_use_id, "tool_input": {"command": command}}


async def _pending(hub: RemoteServer, run_id: str, done: asyncio.Future[Any]) -> Any:
    """The call the hook process ``done`` holds, once it waits in the hub's queue; a hook that
    ended instead (it never waits for a person) fails here with what it said."""
    async with RemoteClient(hub.address, token=OP) as client:

        async def asking() -> bool:
            if done.done():
                out, err = done.result()
                raise AssertionError(f"the hook ended before its call waited in the queue: {out!r} {err!r}")
            return bool([i for i in await client.list_waiting() if i.run_id == run_id])

        await until(asking, what="the call waiting in the hub's queue", timeout=PROCESS_S)
        return [i for i in await client.list_waiting() if i.run_id == run_id][0]


async def test_a_session_is_a_run_and_an_asked_call_runs_only_once_a_person_approves_it(hub: RemoteServer) -> None:
    out, _ = await hook(hub.address, {"hook_event_name": "UserPromptSubmit", "prompt": "tidy the logs"})
    assert out is None  # nothing to say: Claude Code goes on
    run_id = "cc-" + SESSION
    async with RemoteClient(hub.address, token=OP) as client:
        [summary] = await client.list_runs()
        assert (summary.run_id, summary.goal_summary, summary.origin, summary.owner) == (run_id, "tidy the logs", "claude-code", "r1")
    proc, done = await hook(hub.address, _tool("toolu_1", "rm -rf logs/old"), "--ask", "Bash", wait=False)
    item = await _pending(hub, run_id, done)
    assert (item.target_id, item.tool_name, json.loads(item.args_json)) == ("toolu_1", "Bash", {"command": "rm -rf logs/old"})
    assert not done.done()  # the call is held while nobody decided
    async with RemoteClient(hub.address, token=OP) as client:
        from goldfive.control import ControlKind, ControlMessage

        ack = await client.send_control(run_id, ControlMessage(ControlKind.APPROVE, payload={"target_id": "toolu_1", "client": "ctl"}))
        assert ack.result.value == "SUCCESS"
    out, _ = await asyncio.wait_for(done, PROCESS_S)
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    async with RemoteClient(hub.address, token=OP) as client:
        decided = [ev.approval_decided async for ev in _events(client, run_id) if ev.WhichOneof("payload") == "approval_decided"]
    assert [(d.outcome, d.author, d.hub_check) for d in decided] == [("APPROVED", "alice", "routed")]


async def _events(client: RemoteClient, run_id: str):  # type: ignore[no-untyped-def]
    snap = await client.get_run(run_id)
    async for ev in client.subscribe(run_id, -1):
        yield ev
        if ev.sequence >= snap.last_sequence:
            return


async def test_a_rejection_reaches_claude_code_with_its_reason_and_edits_reach_it_too(hub: RemoteServer) -> None:
    from goldfive.control import ControlKind, ControlMessage

    run_id = "cc-" + SESSION
    proc, done = await hook(hub.address, _tool("toolu_2", "git push --force"), "--ask", "Bash", wait=False)
    await _pending(hub, run_id, done)
    async with RemoteClient(hub.address, token=OP) as client:
        await client.send_control(run_id, ControlMessage(ControlKind.REJECT, payload={"target_id": "toolu_2", "detail": "never force-push main"}))
    out, _ = await asyncio.wait_for(done, PROCESS_S)
    assert json.loads(out)["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "never force-push main",
    }  # fmt: skip
    proc, done = await hook(hub.address, _tool("toolu_3", "rm -rf /", event="PermissionRequest"), wait=False)
    await _pending(hub, run_id, done)
    async with RemoteClient(hub.address, token=OP) as client:
        edited = {"command": "rm -rf ./tmp"}
        await client.send_control(run_id, ControlMessage(ControlKind.APPROVE, payload={"target_id": "toolu_3", "arguments": edited}))
    out, _ = await asyncio.wait_for(done, PROCESS_S)
    assert json.loads(out) == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": edited}}
    }


async def test_without_a_decision_in_time_or_without_a_hub_claude_code_asks_its_own_user(hub: RemoteServer, tmp_path: Path) -> None:
    out, _ = await hook(hub.address, _tool("toolu_4", "make deploy"), "--ask", "Bash", "--wait", "1")
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask"
    out, err = await hook("127.0.0.1:1", _tool("toolu_5", "make deploy"), "--ask", "Bash")
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask" and "did not answer" in err
    out, err = await hook("127.0.0.1:1", _tool("toolu_6", "ls"))  # not a call a person decides: no answer
    assert out is None
    out, err = await hook(None, _tool("toolu_7", "ls", event="PermissionRequest"))  # no hub: Claude Code's own dialog
    assert out is None and "no hub" in err


async def test_another_runner_token_cannot_report_into_a_session_nor_decide_for_it(hub: RemoteServer) -> None:
    await hook(hub.address, {"hook_event_name": "UserPromptSubmit", "prompt": "mine"})
    out, err = await hook(hub.address, _tool("toolu_8", "curl evil"), "--ask", "Bash", token=R2)
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask"  # refused, so never "allow"
    assert "PERMISSION_DENIED" in err and "belongs to token 'r1'" in err


async def test_a_rule_for_always_answers_before_anyone_is_asked(hub: RemoteServer) -> None:
    from goldfive.control import ControlKind, ControlMessage

    run_id = "cc-" + SESSION
    proc, done = await hook(hub.address, _tool("toolu_9", "pytest -q"), "--ask", "Bash", wait=False)
    await _pending(hub, run_id, done)
    async with RemoteClient(hub.address, token=OP) as client:
        always = {"scope": "run", "match": {"command": {"kind": "exact", "value": "pytest -q"}}}
        await client.send_control(run_id, ControlMessage(ControlKind.APPROVE, payload={"target_id": "toolu_9", "always": always}))
    await asyncio.wait_for(done, PROCESS_S)
    out, _ = await hook(hub.address, _tool("toolu_10", "pytest -q"), "--ask", "Bash")  # same call: the rule answers
    assert out["hookSpecificOutput"]["permissionDecision"] == "allow"
    out, _ = await hook(hub.address, _tool("toolu_11", "pytest -x"), "--ask", "Bash", "--wait", "1")  # another: asked
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask"


async def test_the_session_ends_as_a_completed_run_and_a_late_hook_changes_nothing(hub: RemoteServer) -> None:
    await hook(hub.address, {"hook_event_name": "UserPromptSubmit", "prompt": "one thing"})
    await hook(hub.address, {"hook_event_name": "SessionEnd", "reason": "logout"})
    async with RemoteClient(hub.address, token=OP) as client:
        [summary] = await client.list_runs()
        assert summary.state == "COMPLETED"
    out, _ = await hook(hub.address, _tool("toolu_12", "ls"), "--ask", "Bash")
    assert out is None  # ended: not held, nothing said


def test_install_merges_the_hook_into_settings_and_keeps_what_is_there(tmp_path: Path) -> None:
    from goldfive.cli.hook import merge_settings

    mine = {"type": "command", "command": "my-formatter"}
    settings = {"model": "opus", "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [mine]}]}}
    merged, added = merge_settings(json.loads(json.dumps(settings)), "goldfive hook claude-code --ask Bash", 600)
    assert merged["model"] == "opus" and merged["hooks"]["PostToolUse"][0] == {"matcher": "Edit", "hooks": [mine]}
    assert "PreToolUse" in added and merged["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] == 630
    again, added_again = merge_settings(merged, "goldfive hook claude-code", 600)
    assert added_again == [] and again == merged  # never twice


# -- the real Claude Code (the CLI the claude-agent-sdk wheel bundles), offline ---------------


def _bundled_claude() -> str:
    claude_agent_sdk = pytest.importorskip("claude_agent_sdk")
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    assert path.exists(), f"the claude-agent-sdk wheel has no bundled CLI at {path}"
    return str(path)


@pytest.mark.parametrize("verdict", ["approve", "reject"])
async def test_the_real_claude_code_runs_a_held_command_only_after_approval_and_reads_a_rejections_reason(
    hub: RemoteServer, tmp_path: Path, verdict: str
) -> None:
    from goldfive.control import ControlKind, ControlMessage
    from tests.adapters.claude_kit import MessagesServer, tool_results

    marker = tmp_path / "ran"
    command = f"echo ran > {marker}"

    def respond(body: dict[str, Any]) -> list[Any]:
        results = tool_results(body)
        if "toolu_hooked" in results:
            return [("text", f"done: {results['toolu_hooked'][:200]}")]
        return [("tool_use", "Bash", {"command": command, "description": "write the marker"}, "toolu_hooked")]

    api = MessagesServer(respond)
    home = tmp_path / "home"
    home.mkdir()
    hook_cmd = f"{sys.executable} -m goldfive.cli hook claude-code --ask Bash --wait 60"
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {event: [{"matcher": "*", "hooks": [{"type": "command", "command": hook_cmd, "timeout": 90}]}]
                                               for event in ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionEnd")}}))  # fmt: skip
    env = {
        **os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-test-offline",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "GOLDFIVE_HUB": hub.address, "GOLDFIVE_HUB_TOKEN": R1,
        "PYTHONPATH": str(ROOT),
    }  # fmt: skip
    env.pop("GOLDFIVE_TOKEN", None)
    claude = await asyncio.create_subprocess_exec(
        _bundled_claude(), "-p", "write the marker", "--settings", str(settings), "--model", "claude-test",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=home,
    )  # fmt: skip
    try:
        async with RemoteClient(hub.address, token=OP) as client:

            async def held() -> bool:
                return any(i.target_id == "toolu_hooked" for i in await client.list_waiting())

            await until(held, timeout=60, what="Claude Code's Bash call waiting in the hub")
            [item] = [i for i in await client.list_waiting() if i.target_id == "toolu_hooked"]
            assert json.loads(item.args_json)["command"] == command and item.run_id.startswith("cc-")
            await asyncio.sleep(0.5)
            assert not marker.exists()  # held: it has not run
            kind = ControlKind.APPROVE if verdict == "approve" else ControlKind.REJECT
            payload = {"target_id": "toolu_hooked", "detail": "" if verdict == "approve" else "not on this machine"}
            ack = await client.send_control(item.run_id, ControlMessage(kind, payload=payload))
            assert ack.result.value == "SUCCESS", ack.detail
        out, err = await asyncio.wait_for(claude.communicate(), 90)
    finally:
        if claude.returncode is None:
            claude.kill()
            await claude.wait()
        api.close()
    assert claude.returncode == 0, err.decode()[-2000:]
    if verdict == "approve":
        assert marker.read_text().strip() == "ran"
    else:
        assert not marker.exists()
        assert any("not on this machine" in text for text in tool_results(api.requests[-1]).values())
