"""``goldfive runs``: the runs recorded on this machine, without a hub; ``runs prune`` removes
old ones from the recording (with a count, after a confirmation)."""

from __future__ import annotations

import json
import os
import time

import click

from goldfive.cli.output import echo, field
from goldfive.errors import GoldfiveError

__all__ = ["register", "runs_group"]

EXIT_ERROR = 2


def _fail(message: str) -> click.exceptions.Exit:
    echo(f"goldfive runs: {field(message)}", err=True)
    return click.exceptions.Exit(EXIT_ERROR)


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000)) if ms > 0 else "-"


_DB = click.option("--db", "db_path", metavar="FILE", help="The SQLite recording (default: the user data directory's runs.sqlite).")


@click.group("runs", invoke_without_command=True, short_help="The runs recorded on this machine; prune old ones.")
@_DB
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def runs_group(ctx: click.Context, db_path: str | None, as_json: bool) -> None:
    """List the runs recorded on this machine (goldfive run, demo, the TUI), newest first:
    id, state, events, start, goal. `goldfive replay` opens one; `goldfive runs prune` removes
    old ones."""
    if ctx.invoked_subcommand is not None:
        return
    from goldfive.recording import recorded_run_choices
    from goldfive.settings import default_db_path

    path = db_path or default_db_path()
    try:
        choices = recorded_run_choices(path) if db_path is not None or os.path.exists(path) else []
    except GoldfiveError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        click.echo(json.dumps([{"run_id": c.run_id, "state": c.state, "events": c.events, "started_ms": c.started_ms, "goal": c.goal} for c in choices]))
        return
    if not choices:
        echo(f"no runs recorded in {path}")
        return
    echo(f"{'RUN':<12}  {'STATE':<11} {'EVENTS':>6}  {'STARTED':<16}  GOAL")
    for c in choices:
        echo(f"{field(c.run_id)[:12]:<12}  {c.state:<11} {c.events:>6}  {_when(c.started_ms):<16}  {field(c.goal)}")
    echo(f"{len(choices)} runs in {path}; open one with: goldfive replay {path} --run-id ID")


@runs_group.command("prune", short_help="Remove the runs whose last event is older than an age.")
@click.option("--older-than", "older_than", required=True, metavar="AGE", help="30d, 12h, 90m, 2w: runs whose last event is older.")
@_DB
@click.option("--yes", "-y", is_flag=True, help="Do not ask for a confirmation.")
def prune_command(older_than: str, db_path: str | None, yes: bool) -> None:
    """Remove from the recording every run whose last event is older than AGE (a run a live
    process is writing is kept). Says how many runs and events, and asks first."""
    from goldfive.settings import default_db_path
    from goldfive.store.prune import old_runs, parse_age, remove_runs

    path = db_path or default_db_path()
    if db_path is None and not os.path.exists(path):
        echo(f"nothing is recorded on this machine yet ({path}): nothing to remove")
        return
    try:
        cutoff = time.time_ns() // 1_000_000 - parse_age(older_than)
        runs = old_runs(path, cutoff)
    except GoldfiveError as exc:
        raise _fail(str(exc)) from None
    if not runs:
        echo(f"no run in {path} is older than {older_than}: nothing to remove")
        return
    states: dict[str, int] = {}
    for r in runs:
        states[r.state] = states.get(r.state, 0) + 1
    events = sum(r.events for r in runs)
    by_state = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
    noun = "run" if len(runs) == 1 else "runs"
    echo(f"{len(runs)} {noun} in {path} ended more than {older_than} ago ({by_state}; {events:,} events), "
         f"the oldest from {_when(runs[0].last_ms)}.")  # fmt: skip
    if not yes and not click.confirm(f"Remove these {len(runs)} {noun}?", default=False):
        echo("nothing removed")
        return
    try:
        removed = remove_runs(path, [r.run_id for r in runs])
    except GoldfiveError as exc:
        raise _fail(str(exc)) from None
    echo(f"removed {len(runs)} {noun} ({removed:,} events) from {path}")


def register(group: click.Group) -> None:
    group.add_command(runs_group)
