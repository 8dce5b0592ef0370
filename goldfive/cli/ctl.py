"""``goldfive ctl ADDR ...``: inspect and control runs served by ``goldfive serve``, for scripts.

Exit codes: 0 when the ack is SUCCESS (or a query succeeded), 1 when the ack is FAILURE or
UNSUPPORTED, 2 for usage errors and for calls the server refused or could not take
(unreachable, unauthenticated, unknown run, invalid control): one line on stderr, no traceback.
RUN is always given explicitly: the full id or a unique prefix of at least 4 characters
(``goldfive ctl ADDR runs`` lists them).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click
from google.protobuf import json_format

from goldfive.cli.output import echo, field, write_lines
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
from goldfive.errors import GoldfiveError, RemoteError
from goldfive.link.client import RemoteClient

__all__ = ["ctl"]

EXIT_FAILURE = 1
EXIT_ERROR = 2
T = TypeVar("T")


@dataclass(frozen=True)
class _Opts:
    addr: str
    token: str | None
    tls_ca: str | None
    as_json: bool
    #: This client's certificate and key, for a server started with --tls-client-ca.
    tls_cert: str | None = None
    tls_key: str | None = None


def _fail(message: str, code: int = EXIT_ERROR) -> click.exceptions.Exit:
    echo(f"goldfive ctl: error: {field(message)}", err=True)  # a hub's refusal can quote a run's text
    return click.exceptions.Exit(code)


def addr_problem(addr: str) -> str | None:
    """Why ``addr`` cannot be a server address, or None; said before gRPC turns a missing
    port into a name-resolution error."""
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port:
        return f"ADDR {addr!r} must be HOST:PORT, e.g. 127.0.0.1:7531"
    return None


def client_cert_problem(tls_cert: str | None, tls_key: str | None) -> str | None:
    """Why a client certificate and key cannot be used as given, or None."""
    if (tls_cert is None) != (tls_key is None):
        return "--tls-cert and --tls-key go together: give this client's certificate and its key"
    return None


def _call(opts: _Opts, fn: Callable[[RemoteClient], Awaitable[T]]) -> T:
    # Checked here, not in the group: "goldfive ctl ADDR status --help" must still show help.
    problem = addr_problem(opts.addr) or client_cert_problem(opts.tls_cert, opts.tls_key)
    if problem is not None:
        raise _fail(problem)
    async def main() -> T:
        client = RemoteClient(
            opts.addr, token=opts.token, tls_ca=opts.tls_ca, tls_client_cert=opts.tls_cert, tls_client_key=opts.tls_key
        )
        async with client:
            return await fn(client)

    try:
        return asyncio.run(main())
    except RemoteError as exc:
        raise _fail(f"{opts.addr}: {exc}") from None
    except (GoldfiveError, OSError) as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        raise click.exceptions.Exit(130) from None


def _dict(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _token(given: str | None, path: str | None, env: str | None) -> str | None:
    """``--token``, else ``--token-file``'s, else ``env``; a bad file is one line, exit 2."""
    from goldfive.cli.inputs import InputError
    from goldfive.cli.tokens import client_token

    try:
        return client_token(given, path, env, flag="--token", warn=lambda m: echo(f"goldfive ctl: warning: {m}", err=True))
    except InputError as exc:
        raise _fail(str(exc)) from None


def _merge(ctx: click.Context, sub: _Opts) -> _Opts:
    base: _Opts = ctx.obj
    return _Opts(
        base.addr,
        sub.token or base.token,
        sub.tls_ca or base.tls_ca,
        sub.as_json or base.as_json,
        sub.tls_cert or base.tls_cert,
        sub.tls_key or base.tls_key,
    )


_PEM = click.Path(exists=True, dir_okay=False)
_CERT_HELP = "This client's certificate (PEM), for a server that requires one."
_KEY_HELP = "The private key (PEM) of --tls-cert."
_TOKEN_FILE_HELP = "Read the bearer token from FILE (kept out of the process list)."


def _options(fn: Callable[..., None]) -> Callable[..., None]:
    """The group's options are accepted after the subcommand too (``ctl ADDR pause --json RUN``)."""

    def wrapper(
        ctx: click.Context,
        sub_token: str | None,
        sub_token_file: str | None,
        sub_tls_ca: str | None,
        sub_tls_cert: str | None,
        sub_tls_key: str | None,
        sub_json: bool,
        **kw: Any,
    ) -> None:
        token = _token(sub_token, sub_token_file, None)
        fn(_merge(ctx, _Opts("", token, sub_tls_ca, sub_json, sub_tls_cert, sub_tls_key)), **kw)

    # click reads the command's name and help from these; set by hand (not functools.wraps)
    # so the wrapper keeps its own signature for click.pass_context's type.
    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    command: Callable[..., None] = click.pass_context(wrapper)
    for option in reversed(
        (
            click.option("--token", "sub_token", help="Bearer token (default: GOLDFIVE_TOKEN)."),
            click.option("--token-file", "sub_token_file", metavar="FILE", help=_TOKEN_FILE_HELP),
            click.option("--tls-ca", "sub_tls_ca", type=_PEM, help="CA certificate (PEM)."),
            click.option("--tls-cert", "sub_tls_cert", type=_PEM, help=_CERT_HELP),
            click.option("--tls-key", "sub_tls_key", type=_PEM, help=_KEY_HELP),
            click.option("--json", "sub_json", is_flag=True, help="Print JSON instead of text."),
        )
    ):
        command = option(command)
    return command


class _CtlGroup(click.Group):
    """Accepts the group's options after ADDR too (``ctl ADDR --json runs``): the options
    between ADDR and the subcommand are moved in front of ADDR before click parses them."""

    _VALUED = ("--token", "--token-file", "--tls-ca", "--tls-cert", "--tls-key")

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        options: list[str] = []
        positional: list[str] = []
        i = 0
        while i < len(args):
            tok = args[i]
            if positional and tok in self.commands:
                break
            if tok in self._VALUED and i + 1 < len(args):
                options += args[i : i + 2]
                i += 2
                continue
            (options if tok.startswith("-") else positional).append(tok)
            i += 1
        return super().parse_args(ctx, options + positional + args[i:])


@click.group("ctl", cls=_CtlGroup)
@click.argument("addr", metavar="ADDR")
@click.option("--token", help="Bearer token (default: GOLDFIVE_TOKEN).")
@click.option("--token-file", metavar="FILE", help=_TOKEN_FILE_HELP)
@click.option("--tls-ca", type=_PEM, help="CA certificate (PEM): use TLS.")
@click.option("--tls-cert", type=_PEM, help=_CERT_HELP)
@click.option("--tls-key", type=_PEM, help=_KEY_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def ctl(
    ctx: click.Context,
    addr: str,
    token: str | None,
    token_file: str | None,
    tls_ca: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    as_json: bool,
) -> None:
    """Inspect and control the runs served at ADDR (HOST:PORT)."""
    from goldfive.settings import remote_token

    ctx.obj = _Opts(addr, _token(token, token_file, remote_token()), tls_ca, as_json, tls_cert, tls_key)


# -- queries ------------------------------------------------------------------------------


@ctl.command("runs", short_help="List the runs, those that need a person first.")
@_options
def runs_command(opts: _Opts) -> None:
    """List the runs (live and recorded), the ones that need a person first."""
    warning: list[str] = []

    async def read(client: Any) -> list[Any]:
        found = await client.list_runs()
        warning.append(client.hub_warning)
        return list(found)

    runs = _call(opts, read)
    if warning and warning[0]:  # on stderr: the rows (or the JSON) stay what scripts read
        echo(f"goldfive ctl: hub degraded: {field(warning[0])}", err=True)
    if opts.as_json:  # json.dumps escapes every control character: \u001b, \u009b
        click.echo(json.dumps([_dict(r) for r in runs]))
        return
    from goldfive.cli.ctl_hub import run_line, runs_order

    for r in sorted(runs, key=runs_order):
        echo(run_line(r))


@ctl.command("status")
@click.argument("run_id", metavar="RUN")
@_options
def status_command(opts: _Opts, run_id: str) -> None:
    """A run's snapshot: state, plan with statuses, pending approvals."""
    snap = _call(opts, lambda c: c.get_run(run_id))
    if opts.as_json:
        click.echo(json.dumps(_dict(snap)))
        return
    s = snap.summary
    echo(f"run {field(s.run_id)}: {field(s.state)}{' (paused)' if snap.paused else ''}, "
         f"{s.tasks_completed}/{s.tasks_total} tasks, last sequence {snap.last_sequence}")  # fmt: skip
    if s.goal_summary:
        echo(f"goal: {field(s.goal_summary)}")
    if s.needs_you:
        echo(f"needs you: {field(s.needs_you)}")
    from goldfive.remote.health import health_note

    if note := health_note(s):
        echo(f"recording: {field(note)}")
    from goldfive import conv
    from goldfive.usage.format import format_cost, format_tokens, format_totals

    totals = conv.from_pb_usage_totals(s.usage)
    if totals.calls:
        echo(f"usage: {format_totals(totals)}")
    for t in snap.plan.tasks:
        status = conv.task_status_from_pb(t.status) if t.status else "PENDING"
        used = ""
        if t.id in snap.task_usage:
            u = conv.from_pb_usage_totals(snap.task_usage[t.id])
            used = f"  [{format_tokens(u.tokens)} tok {format_cost(u)}]"
        echo(f"  {str(status):<10} {field(t.id)}  {field(t.title)}{used}")
    for a in snap.pending_approvals:
        echo(f"  approval waiting: {field(a.target_id)} ({field(a.kind)}) {field(a.prompt)}")


@ctl.command("tail", short_help="Print the run's events, history then live.")
@click.argument("run_id", metavar="RUN")
@click.option("--after", type=int, default=-1, show_default=True, help="Start after this sequence.")
@_options
def tail_command(opts: _Opts, run_id: str, after: int) -> None:
    """Print the run's events (history, then live) until it ends; reconnects if cut."""
    from goldfive.event_format import format_event

    def as_json(ev: Any) -> str:
        return json_format.MessageToJson(ev, preserving_proto_field_name=True, indent=None)

    line = as_json if opts.as_json else format_event

    def tell(state: str, detail: str) -> None:
        if state == "reconnecting":
            echo(f"goldfive ctl: {field(detail)}", err=True)

    async def follow(client: RemoteClient) -> None:
        await client.get_run(run_id)  # unreachable or unknown: fail now rather than retry forever
        out = sys.stdout  # read now: a redirected stdout is honoured
        async for batch in client.follow_batches(run_id, after, on_state=tell):
            write_lines(out, [line(ev) for ev in batch])  # one write per batch, not per line

    _call(opts, follow)


# -- controls -----------------------------------------------------------------------------


def _control(opts: _Opts, run_id: str, kind: ControlKind, payload: dict[str, Any] | None = None) -> None:
    msg = ControlMessage(kind, payload=dict(payload or {}))

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
    if result is not AckResult.SUCCESS:
        raise click.exceptions.Exit(EXIT_FAILURE)


_RUN = click.argument("run_id", metavar="RUN")


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


@ctl.command("steer")
@_RUN
@click.argument("note")
@click.option("--author", default="", help="Who is steering.")
@_options
def steer_command(opts: _Opts, run_id: str, note: str, author: str) -> None:
    """STEER the run with NOTE (at most 8 KiB)."""
    _control(opts, run_id, ControlKind.STEER, {"note": note, "author": author})


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


# approve / reject / ledger / rules: goldfive.cli.ctl_approvals registers them on this group.
from goldfive.cli import ctl_approvals as _approvals  # noqa: E402,F401
