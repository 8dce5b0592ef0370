"""``ctl runs``, ``status``, ``tail``: what the runs are doing, for a person or a script."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from google.protobuf import json_format

from goldfive.cli.ctl.group import _call, _dict, _Opts, _options, ctl
from goldfive.cli.output import echo, field, write_lines
from goldfive.link.client import RemoteClient


@ctl.command("runs", short_help="List the runs, those that need a person first.")
@click.option("--archived", is_flag=True, help="Also the runs a person archived (ctl archive).")
@_options
def runs_command(opts: _Opts, archived: bool) -> None:
    """List the runs (live and recorded), the ones that need a person first."""
    warning: list[str] = []

    async def read(client: Any) -> list[Any]:
        found = await client.list_runs(include_archived=archived)
        warning.append(client.hub_warning)
        return list(found)

    runs = _call(opts, read)
    if warning and warning[0]:  # on stderr: the rows (or the JSON) stay what scripts read
        echo(f"goldfive ctl: hub degraded: {field(warning[0])}", err=True)
    if opts.as_json:  # json.dumps escapes every control character: \u001b, \u009b
        click.echo(json.dumps([_dict(r) for r in runs]))
        return
    from goldfive.cli.ctl.hub import runs_order, runs_table

    if not runs:  # said on stderr: stdout stays the rows a script reads (none)
        more = "" if archived else " (ctl runs --archived also lists archived ones)"
        echo(f"goldfive ctl: no runs on {field(opts.addr)}{more}", err=True)
        return
    header, rows = runs_table(sorted(runs, key=runs_order))
    echo(header, err=True)  # on stderr, as the empty-hub line: stdout stays the rows a script reads
    for row in rows:
        echo(row)


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
    if s.budget:
        echo(f"budget: {field(s.budget)}")
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
        if a.kind == "question":  # answered with `ctl answer RUN ID TEXT`
            echo(f"  question waiting: {field(a.target_id)} {field(a.prompt)}")
        else:
            echo(f"  approval waiting: {field(a.target_id)} ({field(a.kind)}) {field(a.prompt)}")
        if a.review:  # the run's reviewer: asked a person, or decides after its grace unless overruled
            said = "asks a person" if a.review == "ask" else f"says {a.review} unless a person decides first"
            echo(f"    reviewer {said}: {field(a.review_reason)}")
        elif a.under_review:
            echo("    the reviewer is looking at it (a person is asked only if it asks)")
    if snap.steer_queue:
        echo("queued for when the next task starts:")
    for n in snap.steer_queue:
        echo(f"  {field(n.id)}{' [held]' if n.held else ''}  {field(n.text)}" + (f"  (by {field(n.author)})" if n.author else ""))
    if snap.guidance:
        echo("standing guidance (in every later task's input):")
    for n in snap.guidance:
        echo(f"  {field(n.id)}  {field(n.text)}" + (f"  (by {field(n.author)})" if n.author else ""))


@ctl.command("tail", short_help="Print the run's events, history then live.")
@click.argument("run_id", metavar="RUN")
@click.option("--after", type=int, default=-1, show_default=True, help="Start after this sequence.")
@_options
def tail_command(opts: _Opts, run_id: str, after: int) -> None:
    """Print the run's events (history, then live) until it ends; reconnects if cut."""
    from goldfive.event_format import EventLines

    def as_json(ev: Any) -> list[str]:
        return [json_format.MessageToJson(ev, preserving_proto_field_name=True, indent=None)]

    text = EventLines()  # one line per control, as the TUI's log shows it
    lines = as_json if opts.as_json else text.lines

    def tell(state: str, detail: str) -> None:
        if state == "reconnecting":
            echo(f"goldfive ctl: {field(detail)}", err=True)

    async def follow(client: RemoteClient) -> None:
        await client.get_run(run_id)  # unreachable or unknown: fail now rather than retry forever
        out = sys.stdout  # read now: a redirected stdout is honoured
        async for batch in client.follow_batches(run_id, after, on_state=tell):
            write_lines(out, [line for ev in batch for line in lines(ev)])  # one write per batch, not per line
        if not opts.as_json:
            write_lines(out, text.flush())  # a control the run never acked

    _call(opts, follow)
