"""``goldfive ctl ADDR approve|reject|answer|ledger|rules``: deciding approvals, answering
questions, reading who decided, and the rules for "always". Each control says who sent it (the
OS user) and through ``ctl``."""

from __future__ import annotations

import json
from typing import Any

import click

from goldfive.cli.ctl.controls import _control
from goldfive.cli.ctl.group import EXIT_FAILURE, _call, _fail, _Opts, _options, _RUN, ctl
from goldfive.cli.output import echo, field
from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.link.client import RemoteClient
from goldfive.settings import os_user

CLIENT = "ctl"


def _json_object(text: str | None, what: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise _fail(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _fail(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


@ctl.command("approve", short_help="APPROVE a pending approval (edited arguments, a rule).")
@_RUN
@click.argument("target_id", metavar="ID")
@click.option("--detail", default="", help="A note for the agent.")
@click.option("--args", "args_json", metavar="JSON", help="Run the call with these arguments instead (a JSON object).")
@click.option("--always", is_flag=True, help="Also approve such calls from now on (a rule; see --match, --scope).")
@click.option("--match", "match_json", metavar="JSON",
              help='With --always: per argument, {"path": {"kind": "path_under", "value": "src"}}; '
                   "kinds exact, path_under, glob, range (low/high), any. Without it: every call to the tool.")  # fmt: skip
@click.option("--scope", type=click.Choice(["run", "machine"]), default="run", show_default=True, help="With --always.")
@_options
def approve_command(
    opts: _Opts, run_id: str, target_id: str, detail: str, args_json: str | None, always: bool, match_json: str | None, scope: str
) -> None:
    """APPROVE the pending approval ID (optionally with edited arguments, and a rule for next time)."""
    payload: dict[str, Any] = {"target_id": target_id, "detail": detail, "author": os_user(), "client": CLIENT}
    arguments = _json_object(args_json, "--args")
    if arguments is not None:
        payload["arguments"] = arguments
    match = _json_object(match_json, "--match")
    if match is not None and not always:
        raise _fail("--match goes with --always")
    if always:
        payload["always"] = {"scope": scope, "match": match or {}}
    _control(opts, run_id, ControlKind.APPROVE, payload)


@ctl.command("reject")
@_RUN
@click.argument("target_id", metavar="ID")
@click.option("--detail", default="", help="Why.")
@_options
def reject_command(opts: _Opts, run_id: str, target_id: str, detail: str) -> None:
    """REJECT the pending approval ID."""
    _control(opts, run_id, ControlKind.REJECT, {"target_id": target_id, "detail": detail, "author": os_user(), "client": CLIENT})


@ctl.command("answer", short_help="ANSWER a pending question (typed text, or --option).")
@_RUN
@click.argument("target_id", metavar="ID")
@click.argument("text", required=False, default="")
@click.option("--option", default="", metavar="OPTION", help="Pick one of the options the question offers instead of typing.")
@_options
def answer_command(opts: _Opts, run_id: str, target_id: str, text: str, option: str) -> None:
    """ANSWER the pending question ID with TEXT, or with one of its options (--option). The
    run refuses an option it did not offer, and text when the question takes only its options."""
    if bool(text) == bool(option):
        raise _fail("give the answer as TEXT or --option OPTION (one of them)")
    payload: dict[str, Any] = {"target_id": target_id, "author": os_user(), "client": CLIENT}
    payload.update({"option": option} if option else {"text": text})
    _control(opts, run_id, ControlKind.ANSWER, payload)


#: What ``ctl ledger`` reads: the decisions, and what happened to each before it was decided.
_LEDGER_KINDS = frozenset({"approval_decided", "approval_reminded", "approval_escalated", "approval_reviewed"})


@ctl.command("ledger", short_help="Every approval decision of a run: who, via which client, what ran.")
@_RUN
@_options
def ledger_command(opts: _Opts, run_id: str) -> None:
    """The run's approvals ledger, from its recording: approved, edited, rejected, approved by
    a rule, timed out, cancelled; who decided, through which client, when, the arguments that ran."""
    from goldfive.approvals.ledger import format_entry, ledger_of
    from goldfive.pb.goldfive.v1.events_pb2 import Event

    async def read(client: RemoteClient) -> list[Event]:
        last = (await client.get_run(run_id)).last_sequence
        out: list[Event] = []
        if last < 0:
            return out
        async for ev in client.subscribe(run_id, -1):
            # the decisions, and what each entry says happened before them (reminders, an
            # escalation, the reviewer's verdict)
            if ev.WhichOneof("payload") in _LEDGER_KINDS:
                out.append(ev)
            if ev.sequence >= last:
                break
        return out

    entries = ledger_of(_call(opts, read))
    if opts.as_json:
        click.echo(json.dumps([e.as_dict() for e in entries]))
        return
    if not entries:
        echo("no approval decisions yet")
    for e in entries:
        echo(field(format_entry(e)))  # who decided and the arguments: the run's text, one line


@ctl.group("rules", short_help="List, add and remove the rules for \"always\".")
def rules_group() -> None:
    """The run's rules for "always" (run scope, and the machine's saved ones)."""


def _rules_control(opts: _Opts, run_id: str, payload: dict[str, Any]) -> str:
    from goldfive.run.approval_rules import RULES_VERB

    msg = ControlMessage(RULES_VERB, payload={**payload, "author": os_user(), "client": CLIENT})
    ack = _call(opts, lambda c: c.send_control(run_id, msg))
    if AckResult(ack.result) is not AckResult.SUCCESS:
        raise _fail(ack.detail, code=EXIT_FAILURE)
    return ack.detail


@rules_group.command("list")
@_RUN
@_options
def rules_list(opts: _Opts, run_id: str) -> None:
    """List the rules in force for RUN."""
    from goldfive.approvals.rules import Rule

    listing = json.loads(_rules_control(opts, run_id, {"op": "list"}))
    if opts.as_json:
        click.echo(json.dumps(listing))
        return
    from goldfive.approvals.ledger import when_text

    for raw in listing["rules"]:
        rule = Rule.from_dict(raw)
        made = f" at {when_text(rule.made_at_ms)}" if rule.made_at_ms else ""
        echo(f"{field(rule.id):<5} {field(rule.scope):<8} {field(rule.describe())}  (made by {field(rule.author) or '?'}{made})")
    if listing["never_auto"]:
        echo(f"never automatic: {field(', '.join(map(str, listing['never_auto'])))}")
    if not listing["rules"]:
        echo("no rules")


@rules_group.command("add")
@_RUN
@click.argument("tool")
@click.option("--match", "match_json", metavar="JSON", help='Per argument: {"path": {"kind": "path_under", "value": "src"}}.')
@click.option("--scope", type=click.Choice(["run", "machine"]), default="run", show_default=True)
@_options
def rules_add(opts: _Opts, run_id: str, tool: str, match_json: str | None, scope: str) -> None:
    """Approve calls to TOOL without asking (only those matching --match, when given)."""
    rule = {"tool": tool, "match": _json_object(match_json, "--match") or {}, "scope": scope}
    echo(field(_rules_control(opts, run_id, {"op": "add", "rule": rule})))  # the run's ack detail


@rules_group.command("remove")
@_RUN
@click.argument("rule_id", metavar="RULE")
@_options
def rules_remove(opts: _Opts, run_id: str, rule_id: str) -> None:
    """Remove RULE (it holds from the next call)."""
    echo(field(_rules_control(opts, run_id, {"op": "remove", "rule_id": rule_id})))
