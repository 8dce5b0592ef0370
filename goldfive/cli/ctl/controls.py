"""``ctl pause``, ``resume``, ``cancel``, ``steer``, ``rewind``, ``inject`` and ``ack``: a control sent to a run, and its ack."""

from __future__ import annotations

import json
from typing import Any

import click

from goldfive.cli.ctl.group import EXIT_FAILURE, _RUN, _call, _fail, _Opts, _options, ctl
from goldfive.cli.output import echo, field
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.errors import RemoteError
from goldfive.link.client import RemoteClient


def _control(opts: _Opts, run_id: str, kind: ControlKind, payload: dict[str, Any] | None = None) -> None:
    """Send one control, signed by this person (the OS user; a hub records its token's name,
    keeping this beside it) through ``ctl``."""
    from goldfive.settings import os_user

    body = dict(payload or {})
    body["author"] = body.get("author") or os_user()
    body.setdefault("client", "ctl")
    msg = ControlMessage(kind, payload=body)

    async def send(client: RemoteClient) -> ControlAck:
        try:
            return await client.send_control(run_id, msg)
        except RemoteError as exc:
            if exc.code != "DEADLINE_EXCEEDED":
                raise
            # The control is queued for the run and will be applied: resending would apply it
            # twice. Say how to look its ack up instead.
            raise _fail(
                f"{kind} sent, not yet acked (control {msg.id}); the run applies it when it gets to it. "
                f"Look its ack up with: goldfive ctl {opts.addr} ack {run_id} {msg.id}"
            ) from None

    ack: ControlAck = _call(opts, send)
    _print_ack(opts, str(kind), ack)


def _print_ack(opts: _Opts, kind: str, ack: ControlAck) -> None:
    result = AckResult(ack.result)
    if opts.as_json:
        click.echo(json.dumps({"control_id": ack.control_id, "kind": str(kind), "result": str(result),
                               "detail": ack.detail, "acked_at_ms": ack.acked_at_ms}))  # fmt: skip
    else:
        echo(f"{field(kind)} {result}" + (f": {field(ack.detail)}" if ack.detail else ""))  # the run wrote the detail
        if kind == "STEER" and result is AckResult.SUCCESS:  # the id `ctl guidance RUN make-standing` takes
            echo(f"control {field(ack.control_id)}")
    if result is not AckResult.SUCCESS:
        raise click.exceptions.Exit(EXIT_FAILURE)


@ctl.command("ack", short_help="A control's ack, looked up by its id in the run's history.")
@_RUN
@click.argument("control_id", metavar="CONTROL_ID")
@_options
def ack_command(opts: _Opts, run_id: str, control_id: str) -> None:
    """The ack a run recorded for CONTROL_ID (as printed by a control that was sent, not yet
    acked). Exit 0 on SUCCESS, 1 on FAILURE / UNSUPPORTED / no ack yet."""
    from goldfive import conv

    async def look_up(client: RemoteClient) -> tuple[bool, ControlAck | None, str]:
        last = (await client.get_run(run_id)).last_sequence
        received, kind = False, ""
        if last < 0:
            return received, None, kind
        async for ev in client.subscribe(run_id, -1):
            which = ev.WhichOneof("payload")
            if which == "control_received" and ev.control_received.control.id == control_id:
                received, kind = True, ev.control_received.kind
            elif which == "control_acked" and ev.control_acked.ack.control_id == control_id:
                return True, conv.from_pb_control_ack(ev.control_acked.ack), ev.control_acked.kind
            if ev.sequence >= last:
                break
        return received, None, kind

    received, ack, kind = _call(opts, look_up)
    if ack is None:
        state = "received, not yet acked" if received else "not received yet (still queued, or unknown)"
        raise _fail(f"control {control_id} on run {run_id}: {state}", code=EXIT_FAILURE)
    _print_ack(opts, kind or "control", ack)


@ctl.command("pause")
@_RUN
@_options
def pause_command(opts: _Opts, run_id: str) -> None:
    """PAUSE: the running task finishes, no new task starts."""
    _control(opts, run_id, ControlKind.PAUSE)


@ctl.command("resume")
@_RUN
@_options
def resume_command(opts: _Opts, run_id: str) -> None:
    """RESUME a paused run."""
    _control(opts, run_id, ControlKind.RESUME)


@ctl.command("cancel")
@_RUN
@click.option("--reason", default="", help="Why (recorded with the control).")
@_options
def cancel_command(opts: _Opts, run_id: str, reason: str) -> None:
    """CANCEL the run."""
    _control(opts, run_id, ControlKind.CANCEL, {"reason": reason})


@ctl.command("steer", short_help="STEER the run: now, --later or --standing.")
@_RUN
@click.argument("note")
@click.option("--author", default="", help="Who is steering (default: your OS user name; a hub records its token's name beside it).")
@click.option("--later", is_flag=True, help="Queue NOTE; it is delivered (as a steer) when the next task starts.")
@click.option("--standing", is_flag=True, help="Put NOTE in every later task's input until it is removed (ctl guidance).")
@_options
def steer_command(opts: _Opts, run_id: str, note: str, author: str, later: bool, standing: bool) -> None:
    """STEER the run with NOTE (at most 8 KiB): now (delete-and-replan), --later (after the
    running task), or --standing (guidance for every later task)."""
    if later and standing:
        raise _fail("--later and --standing cannot be combined: a standing note applies from the next task on")
    payload: dict[str, Any] = {"note": note, "author": author}
    if later:
        payload["when"] = "later"
    if standing:
        payload["standing"] = True
    _control(opts, run_id, ControlKind.STEER, payload)


_QUEUE_OPS = ("list", "edit", "withdraw", "up", "down", "hold", "release")


@ctl.command("steer-queue", short_help="List or change the steers queued for after the running task.")
@_RUN
@click.argument("op", type=click.Choice(_QUEUE_OPS))
@click.argument("note_id", metavar="[ID]", required=False, default="")
@click.argument("text", metavar="[TEXT]", required=False, default="")
@click.option("--author", default="", help="Who is changing it.")
@_options
def steer_queue_command(opts: _Opts, run_id: str, op: str, note_id: str, text: str, author: str) -> None:
    """STEER_QUEUE: list the queue, or change the queued note ID (q1, q2, ...): edit ID TEXT,
    withdraw ID, up ID, down ID, hold ID (not delivered until released), release ID."""
    if op != "list" and not note_id:
        raise _fail(f"steer-queue {op} needs the note's ID (see: steer-queue {run_id} list)")
    if op == "edit" and not text:
        raise _fail("steer-queue edit needs ID and the new TEXT")
    if op != "edit" and text:
        raise _fail(f"steer-queue {op} takes no TEXT")
    payload: dict[str, Any] = {"op": op, "author": author}
    if note_id:
        payload["note_id"] = note_id
    if text:
        payload["text"] = text
    _control(opts, run_id, ControlKind.STEER_QUEUE, payload)


@ctl.command("guidance", short_help="List, remove or make standing the run's standing guidance.")
@_RUN
@click.argument("op", type=click.Choice(("list", "remove", "make-standing")))
@click.argument("guidance_id", metavar="[ID]", required=False, default="")
@click.option("--author", default="", help="Who is changing it.")
@_options
def guidance_command(opts: _Opts, run_id: str, op: str, guidance_id: str, author: str) -> None:
    """GUIDANCE: list the standing notes, remove ID (g1, g2, ...), or make-standing ID: an
    earlier steer (its control id, as `ctl steer` printed it) or a queued note (q1, ...)."""
    if op != "list" and not guidance_id:
        raise _fail(f"guidance {op} needs an ID (see: guidance {run_id} list)")
    payload: dict[str, Any] = {"op": op.replace("-", "_"), "author": author}
    if guidance_id:
        payload["id"] = guidance_id
    _control(opts, run_id, ControlKind.GUIDANCE, payload)


@ctl.command("rewind")
@_RUN
@click.argument("task_id", metavar="TASK")
@_options
def rewind_command(opts: _Opts, run_id: str, task_id: str) -> None:
    """REWIND_TO TASK: it and everything downstream run again."""
    _control(opts, run_id, ControlKind.REWIND_TO, {"task_id": task_id})


@ctl.command("inject")
@_RUN
@click.argument("text")
@click.option("--role", default="user", show_default=True, help="The message's role.")
@_options
def inject_command(opts: _Opts, run_id: str, text: str, role: str) -> None:
    """INJECT_MESSAGE TEXT into the running turn."""
    _control(opts, run_id, ControlKind.INJECT_MESSAGE, {"role": role, "text": text})


def budget_payload(limits: str, *, resume: bool = False) -> dict[str, Any]:
    """The BUDGET payload for the ``--budget`` words ("tokens=100000,usd=none"); raises a
    usage error (exit 2) saying which part is wrong."""
    from goldfive.budget import BudgetError, parse_changes

    try:
        changes = parse_changes(limits)
    except BudgetError as exc:
        raise _fail(str(exc)) from None
    payload: dict[str, Any] = {name: 0 if value is None else value for name, value in changes.items()}
    if resume:
        payload["resume"] = True
    return payload


@ctl.command("budget", short_help="BUDGET: change a run's budget (and --resume it).")
@_RUN
@click.argument("limits", metavar="LIMITS")
@click.option("--resume", is_flag=True, help="Also go on, if the run is paused and the new budget allows it.")
@_options
def budget_command(opts: _Opts, run_id: str, limits: str, resume: bool) -> None:
    """BUDGET: set LIMITS on the run, e.g. tokens=100000,usd=5 (also model_calls, tool_calls,
    seconds; none removes a limit). The limits not named stay. A run paused by its budget
    stays paused until RESUME (or --resume here), which goes on only once the budget allows."""
    _control(opts, run_id, ControlKind.BUDGET, budget_payload(limits, resume=resume))
