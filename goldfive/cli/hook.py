"""``goldfive hook claude-code``: Claude Code's hook command, reporting a session to a hub.

Claude Code runs it once per hook event with the event's JSON on stdin. It reports the event
to the hub (``Hub.Hook``: the session is a run on the hub, its prompts and tool calls are its
events) and, for a tool call a person decides, waits for the decision and answers with Claude
Code's own JSON: allow (with edited input), deny (with the person's reason, which the model
reads), or ask (Claude Code's own prompt). Which calls wait for a person: every one Claude Code
itself would ask about (PermissionRequest), and PreToolUse for the tools named with ``--ask``;
the hub's rules for "always" answer first.

The hub is ``--hub ADDR`` or GOLDFIVE_HUB; the token is GOLDFIVE_HUB_TOKEN (else GOLDFIVE_TOKEN),
never an option (a command line is readable by every local user). A hub that cannot be
reached, or refuses, never turns into "allow": a call that needed a person is answered "ask",
anything else gets no answer at all, and one line goes to stderr (Claude Code shows it).

``--install [--user | --project]`` merges the hook entries into Claude Code's settings file,
keeping everything that is there.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

import click

__all__ = ["answer_json", "hook_command", "merge_settings", "register", "report_of"]

#: Claude Code's hook events this command handles, and those whose calls it may hold.
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Notification", "Stop", "SubagentStop", "SessionEnd")
DEFAULT_WAIT_S = 600.0
#: Seconds Claude Code is told to give the hook beyond its own wait (the call's round trip).
_SLACK_S = 30
HUB_ENV = "GOLDFIVE_HUB"


def report_of(data: dict[str, Any], *, ask_tools: frozenset[str], wait_s: float) -> Any:
    """The HookReport for one Claude Code hook input."""
    from goldfive.pb.goldfive.v1 import service_pb2

    event = str(data.get("hook_event_name", ""))
    tool = str(data.get("tool_name", "") or "")
    if event == "PostToolUse":
        payload = data.get("tool_response")
    else:
        payload = data.get("tool_input")
    text = data.get("prompt") or data.get("message") or data.get("reason") or data.get("source") or ""
    ask = event == "PermissionRequest" or (event == "PreToolUse" and ("*" in ask_tools or tool in ask_tools))
    return service_pb2.HookReport(
        source="claude-code", session_id=str(data.get("session_id", "")), event=event, cwd=str(data.get("cwd", "")),
        host=socket.gethostname(), pid=os.getppid(), tool_name=tool, tool_use_id=str(data.get("tool_use_id", "") or ""),
        tool_json=json.dumps(payload) if payload is not None else "", text=str(text), ask=ask, wait_ms=int(wait_s * 1000),
    )  # fmt: skip


def answer_json(event: str, decision: str, reason: str = "", updated_input: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Claude Code's hook output for ``decision`` on ``event``, or None (say nothing)."""
    if event == "PreToolUse" and decision in ("allow", "deny", "ask"):
        out: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": decision}
        if reason:
            out["permissionDecisionReason"] = reason
        if decision == "allow" and updated_input is not None:
            out["updatedInput"] = updated_input
        return {"hookSpecificOutput": out}
    if event == "PermissionRequest" and decision in ("allow", "deny"):
        verdict: dict[str, Any] = {"behavior": decision}
        if decision == "allow" and updated_input is not None:
            verdict["updatedInput"] = updated_input
        if decision == "deny":
            verdict["message"] = reason or "rejected in goldfive"
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": verdict}}
    return None  # "ask" on a PermissionRequest: Claude Code's own dialog, as without a hook


async def _ask_hub(addr: str, token: str | None, tls_ca: str | None, report: Any, wait_s: float) -> Any:
    import grpc

    from goldfive.link.wire import bearer_metadata
    from goldfive.pb.goldfive.v1 import service_pb2_grpc

    if tls_ca:
        creds = grpc.ssl_channel_credentials(Path(tls_ca).read_bytes())
        channel = grpc.aio.secure_channel(addr, creds)
    else:
        channel = grpc.aio.insecure_channel(addr)
    async with channel:
        stub = service_pb2_grpc.HubStub(channel)
        return await stub.Hook(report, metadata=bearer_metadata(token), timeout=wait_s + 15)


@click.command("hook", short_help="An agent's hook command: report its session to a hub (claude-code).")
@click.argument("agent", type=click.Choice(["claude-code"]))
@click.option("--hub", "addr", default=None, help=f"The hub's HOST:PORT (default: {HUB_ENV}).")
@click.option("--ask", "ask", default="", metavar="TOOL,...", help="Also hold these tools' calls for a person before they run ('*': every tool).")
@click.option("--wait", "wait_s", type=float, default=DEFAULT_WAIT_S, show_default=True, metavar="SECONDS",
              help="How long a held call waits for a person; then Claude Code asks its own user.")  # fmt: skip
@click.option("--tls-ca", type=click.Path(exists=True, dir_okay=False), help="CA certificate (PEM) of a hub served with TLS.")
@click.option("--install", is_flag=True, help="Add this hook to Claude Code's settings instead (keeps what is there).")
@click.option("--user", "scope", flag_value="user", default=True, help="With --install: ~/.claude/settings.json (default).")
@click.option("--project", "scope", flag_value="project", help="With --install: .claude/settings.json in this directory.")
def hook_command(agent: str, addr: str | None, ask: str, wait_s: float, tls_ca: str | None, install: bool, scope: str) -> None:
    """Report one Claude Code hook event (JSON on stdin) to a goldfive hub, and answer the
    tool calls a person decides there. Set it as Claude Code's hook command, or run it once
    with --install."""
    if not wait_s > 0:
        raise click.UsageError(f"--wait must be a positive number of seconds, got {wait_s}")
    ask_tools = frozenset(t.strip() for t in ask.split(",") if t.strip())
    if install:
        _install(scope, addr, ask, wait_s, tls_ca)
        return
    from goldfive.settings import hub_token

    raw = sys.stdin.read()
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (ValueError, RecursionError) as exc:
        click.echo(f"goldfive hook: stdin is not Claude Code's hook JSON ({exc}); nothing reported", err=True)
        return
    event = str(data.get("hook_event_name", ""))
    report = report_of(data, ask_tools=ask_tools, wait_s=wait_s)
    addr = addr or os.environ.get(HUB_ENV, "")
    fallback = "ask" if report.ask else ""
    if not addr:
        _answer(event, fallback, f"goldfive hook: no hub (give --hub or set {HUB_ENV})")
        return
    try:
        answer = asyncio.run(_ask_hub(addr, hub_token(), tls_ca, report, wait_s))
    except KeyboardInterrupt:
        _answer(event, fallback, "goldfive hook: interrupted")
        return
    except Exception as exc:  # isolation boundary: whatever went wrong, never "allow"
        import grpc

        detail = f"{exc.code().name}: {exc.details()}" if isinstance(exc, grpc.aio.AioRpcError) else str(exc)
        _answer(event, fallback, f"goldfive hook: the hub at {addr} did not answer: {' '.join(detail.split())[:300]}")
        return
    updated = None
    if answer.updated_input_json:
        try:
            updated = json.loads(answer.updated_input_json)
        except ValueError:
            updated = None
    out = answer_json(event, answer.decision, answer.reason, updated)
    if out is not None:
        click.echo(json.dumps(out))


def _answer(event: str, decision: str, why: str) -> None:
    click.echo(why, err=True)
    out = answer_json(event, decision, why.removeprefix("goldfive hook: "))
    if out is not None:
        click.echo(json.dumps(out))


# -- --install -------------------------------------------------------------------------------


def _command_line(addr: str | None, ask: str, wait_s: float, tls_ca: str | None) -> str:
    exe = shutil.which("goldfive")
    parts = [exe] if exe else [sys.executable, "-m", "goldfive.cli"]
    parts += ["hook", "claude-code"]
    if addr:
        parts += ["--hub", addr]
    if ask:
        parts += ["--ask", ask]
    if wait_s != DEFAULT_WAIT_S:
        parts += ["--wait", f"{wait_s:g}"]
    if tls_ca:
        parts += ["--tls-ca", os.path.abspath(tls_ca)]
    import shlex

    return " ".join(shlex.quote(p) for p in parts)


def merge_settings(settings: dict[str, Any], command: str, wait_s: float) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with goldfive's hook entries added (none replaced, none twice), and the
    events it added them to."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise click.ClickException("the settings file's \"hooks\" is not an object: fix it by hand first")
    added = []
    for event in HOOK_EVENTS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise click.ClickException(f"the settings file's hooks.{event} is not a list: fix it by hand first")
        if any(isinstance(e, dict) and any(isinstance(h, dict) and "hook claude-code" in str(h.get("command", "")) for h in e.get("hooks", [])) for e in entries):
            continue  # goldfive's entry is there already (maybe with other flags): left as it is
        spec: dict[str, Any] = {"type": "command", "command": command}
        if event in ("PreToolUse", "PermissionRequest"):
            spec["timeout"] = int(wait_s) + _SLACK_S
        entry: dict[str, Any] = {"hooks": [spec]}
        if event in ("PreToolUse", "PermissionRequest", "PostToolUse"):
            entry["matcher"] = "*"
        entries.append(entry)
        added.append(event)
    return settings, added


def _install(scope: str, addr: str | None, ask: str, wait_s: float, tls_ca: str | None) -> None:
    path = Path.home() / ".claude" / "settings.json" if scope == "user" else Path.cwd() / ".claude" / "settings.json"
    try:
        settings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot read {path}: {exc}; nothing changed") from None
    if not isinstance(settings, dict):
        raise click.ClickException(f"{path} is not a JSON object; nothing changed")
    merged, added = merge_settings(settings, _command_line(addr, ask, wait_s, tls_ca), wait_s)
    if not added:
        click.echo(f"goldfive hook: {path} already runs goldfive's hook for every event; nothing changed")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".goldfive-tmp")
    tmp.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    click.echo(f"goldfive hook: added to {path} for {', '.join(added)}")
    if not addr and not os.environ.get(HUB_ENV):
        click.echo(f"goldfive hook: set {HUB_ENV}=HOST:PORT (and GOLDFIVE_HUB_TOKEN) where Claude Code runs, or install with --hub")


def register(group: click.Group) -> None:
    group.add_command(hook_command)
