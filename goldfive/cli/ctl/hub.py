"""The hub's ``goldfive ctl`` commands: ``start`` a run in the hub, list what is ``waiting``
for a person, and the ``runs`` table (what needs a person first). Approving and rejecting a
waiting item is ``ctl approve`` / ``ctl reject`` with the RUN and ID ``waiting`` prints;
answering a question ``ctl answer``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import click

from goldfive.cli.ctl.group import EXIT_FAILURE, _call, _dict, _fail, _options, _Opts, ctl
from goldfive.cli.output import echo, field
from goldfive.link.client import RemoteClient

__all__ = ["RUNS_COLUMNS", "age", "run_fields", "run_line", "runs_order", "runs_table", "start_command", "waiting_command"]


def age(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h10m``, ``3d04h``."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def _since(message: Any, field: str, now: float) -> str:
    return age(now - getattr(message, field).ToMilliseconds() / 1000) if message.HasField(field) else "-"


def runs_order(summary: Any) -> tuple[int, int, str]:
    """The runs screen's order (:func:`goldfive.view.attention.order_key`): what needs a
    person first, the most urgent, then the longest waiting; then live runs, then ended ones."""
    from goldfive.view.attention import kind_of_reason, order_key

    since = summary.needs_you_since.ToMilliseconds() if summary.HasField("needs_you_since") else 0
    started = summary.started_at.ToMilliseconds() if summary.HasField("started_at") else 0
    return order_key(kind_of_reason(summary.needs_you), since, summary.state, started, summary.run_id)


#: ``ctl runs``' columns, in order; the last (the goal, then any notes in brackets) is not padded.
RUNS_COLUMNS = ("RUN", "STATE", "TASKS", "ORIGIN", "HOST:PID", "NEEDS YOU", "TASK", "STARTED", "USAGE", "GOAL [NOTES]")


def run_line(r: Any, now: float | None = None) -> str:
    """One ``ctl runs`` row, its fields two spaces apart (``runs_table`` lines them up)."""
    return "  ".join(run_fields(r, now))


def runs_table(runs: list[Any], now: float | None = None) -> tuple[str, list[str]]:
    """``ctl runs``' header and rows, each column as wide as its widest field, so the header
    names stand over their fields."""
    now = time.time() if now is None else now
    rows = [run_fields(r, now) for r in runs]
    widths = [max(len(x[i]) for x in [list(RUNS_COLUMNS), *rows]) for i in range(len(RUNS_COLUMNS) - 1)]

    def line(fields: list[str] | tuple[str, ...]) -> str:
        return "  ".join([f.ljust(w) for f, w in zip(fields, widths)] + [fields[-1]])

    return line(RUNS_COLUMNS), [line(x) for x in rows]


def run_fields(r: Any, now: float | None = None) -> list[str]:
    """One ``ctl runs`` row's fields (``RUNS_COLUMNS``): id, state, tasks, origin, host:pid,
    needs-you (for how long), current task, started, usage, and the goal with what is wrong
    with its recording. Each field the run or the hub wrote is made one line safe for a
    terminal (:func:`goldfive.cli.output.field`); an empty one is "-"."""
    from goldfive.remote.health import health_note

    now = time.time() if now is None else now
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.started_at.ToMilliseconds() / 1000)) if r.HasField("started_at") else "-"
    origin = field(r.origin) or "-"
    connection = field(r.connection)
    # A run the hub placed (serve --ray) that is not placed yet, or whose process failed first.
    pending = connection if connection.startswith(("pending placement", "placement failed")) else ""
    if r.origin in ("connected", "followed", "ray") and connection and connection != "connected" and not pending and r.state not in ("COMPLETED", "ABORTED", "CANCELLED"):
        origin += f"({connection})"
    where = f"{field(r.host)}:{r.pid}" if r.host and r.pid else ""
    if r.hub:  # several hubs: the run's runner is connected to that one
        where += f" via hub {field(r.hub)}"
    from goldfive.view.attention import reviewer_holds

    needs = f"NEEDS YOU {field(r.needs_you)} ({_since(r, 'needs_you_since', now)})" if r.needs_you else reviewer_holds(r) or "-"
    task = field(r.current_task) or "-"
    note = field(health_note(r))
    if r.archived_by:
        pending = " · ".join(p for p in (pending, f"archived by {field(r.archived_by)}") if p)
    cost = usage_words(r)
    goal = (field(r.goal_summary) or "-") + (f"  [{note}]" if note else "") + (f"  [{pending}]" if pending else "")
    return [field(r.run_id), field(r.state) or "-", f"{r.tasks_completed}/{r.tasks_total}", origin, where or "-", needs, task, started, cost, goal]


def usage_words(r: Any) -> str:
    """"12.3k tok $0.42" for a summary's usage, "no model calls" without any."""
    from goldfive import conv
    from goldfive.usage.format import format_cost, format_tokens

    totals = conv.from_pb_usage_totals(r.usage)
    if not totals.calls:
        return "no model calls"
    return f"{format_tokens(totals.tokens)} tok {format_cost(totals)}"


@ctl.command("start", short_help="Host a new run in the hub: demo, or MODULE:FUNCTION.")
@click.argument("agent", metavar="demo | MODULE:FUNCTION")
@click.option("--goal", default="", help="MODULE:FUNCTION: what the run should achieve.")
@click.option("--plan", "plan_path", type=click.Path(dir_okay=False), help="MODULE:FUNCTION: a plan JSON file (read here, sent to the hub).")
@click.option("--speed", type=float, default=1.0, show_default=True, help="demo: pace multiplier.")
@click.option("--budget", "budget", metavar="LIMITS", help="The run's budget, e.g. tokens=50000,usd=2: it pauses and asks at a limit.")
@_options
def start_command(opts: _Opts, agent: str, goal: str, plan_path: str | None, speed: float, budget: str | None) -> None:
    """Start a run in the hub's process and print its id: the demo (with --speed), or your
    agent MODULE:FUNCTION, importable by the hub, with --goal and an optional --plan.
    --budget is part of the start: the run begins with it (the hub's serve --budget default
    never applies to it)."""
    limits = ""
    if budget is not None:  # refused here, before the run starts
        from goldfive.budget import Budget, BudgetError

        try:
            parsed = Budget.parse(budget)
        except BudgetError as exc:
            raise _fail(str(exc)) from None
        if parsed.empty:
            raise _fail(f"--budget {budget!r} sets no limit: give limits as tokens=50000,usd=2")
        limits = parsed.spec()
    if speed <= 0:
        raise _fail(f"--speed must be positive, got {speed}")
    if agent != "demo" and not goal.strip():
        raise _fail("MODULE:FUNCTION needs --goal TEXT: say what the run should achieve")
    plan_json = ""
    if plan_path is not None:
        from goldfive.inputs import InputError, load_plan_file

        try:
            load_plan_file(plan_path)  # refused here, in words, before the hub sees it
            with open(plan_path, encoding="utf-8") as fh:
                plan_json = fh.read()
        except (InputError, OSError) as exc:
            raise _fail(str(exc)) from None
    run_id: str = _call(opts, lambda c: c.start_run(agent, goal=goal, plan_json=plan_json, speed=speed, budget=limits))
    echo(json.dumps({"run_id": run_id}) if opts.as_json else field(run_id))


@ctl.command("waiting", short_help="Everything waiting for a person, across every run, oldest first.")
@click.argument("run_id", metavar="[RUN]", required=False, default="")
@_options
def waiting_command(opts: _Opts, run_id: str) -> None:
    """Every pending approval, question and escalation of every run (or of RUN), oldest
    first: run, kind, id, task, tool, arguments (a question: its prompt and options), age.
    Decide an approval with `ctl ADDR approve RUN ID` or `ctl ADDR reject RUN ID --detail WHY`;
    answer a question with `ctl ADDR answer RUN ID TEXT` (or `--option OPTION`)."""

    async def read(client: RemoteClient) -> list[Any]:
        return await client.list_waiting(run_id)

    items = _call(opts, read)
    if opts.as_json:
        click.echo(json.dumps([_dict(i) for i in items]))
        return
    if not items:
        echo("nothing is waiting for a person")
        return
    now = time.time()
    for i in items:  # every text here is the run's: one line each, safe for a terminal
        what = f"tool {field(i.tool_name)} {field(i.args_json)}" if i.tool_name else field(i.prompt)
        if i.kind == "question" and i.options:
            what += f"  options: {' / '.join(field(o) for o in i.options)}" + ("" if i.free_text else " (pick one)")
        echo(f"{field(i.run_id)}  {field(i.kind):<10} {field(i.target_id)}  task {field(i.task_id) or '-'}  {_since(i, 'since', now):>7}  {what}")
