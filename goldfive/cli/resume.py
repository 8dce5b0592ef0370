"""``goldfive resume RUN``: continue a run started with ``goldfive run`` whose process stopped.

The run's recording says how it was launched (RunStarted.launch_json): the agent's
MODULE:FUNCTION, the plan file or the LLM planner's server and model. The API key is never
recorded: it comes from ``--api-key`` or the environment, as for ``goldfive run``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

import click

from goldfive.cli.extras import extras_options
from goldfive.inputs import load_agent, make_planner
from goldfive.cli.local import EXIT_BAD_INPUT, EXIT_INTERRUPTED, run_headless
from goldfive.control import ControlChannel
from goldfive.errors import GoldfiveError

if TYPE_CHECKING:
    from goldfive.store.sqlite_log import SqliteLog

__all__ = ["register", "resume_command"]


def _fail(message: str) -> click.exceptions.Exit:
    from goldfive.cli.output import echo, field

    echo(f"goldfive resume: {field(message)}", err=True)  # run ids and reasons come from the recording
    return click.exceptions.Exit(EXIT_BAD_INPUT)


@click.command("resume", short_help="Continue a run whose process stopped (goldfive run ...).")
@click.argument("run_ref", metavar="[RUN]", required=False)
@click.option("--db", "db_path", help="The SQLite recording (default: the user data directory's).")
@click.option("--headless", is_flag=True, help="Print one line per event instead of opening the TUI.")
@click.option("--api-key", help="API key for the LLM planner (default: GOLDFIVE_LLM_API_KEY / OPENAI_API_KEY).")
@click.option("--api-key-file", metavar="FILE", help="Read the API key from FILE (kept out of the process list).")
@click.option("--budget", "budget_text", metavar="LIMITS",
              help="Change the run's budget as it resumes, e.g. tokens=100000 (the limits given replace the recorded ones, "
                   "the others stay; none removes one): a run its budget paused goes on when the new budget allows it.")
@extras_options
def resume_command(
    run_ref: str | None, db_path: str | None, headless: bool, api_key: str | None, api_key_file: str | None,
    budget_text: str | None = None, prices_path: str | None = None, otel: bool = False,
) -> None:
    """Continue run RUN (its id or a unique prefix; without it, the one interrupted run) where
    its recording stops: completed tasks are not run again, the task the stop cut off runs
    again, a paused run comes back paused."""
    from goldfive.budget.model import BudgetError, parse_changes
    from goldfive.durable.resume import load_for_resume
    from goldfive.settings import default_db_path

    from goldfive.cli.extras import install_extras
    from goldfive.cli.local import secret_option

    try:
        changes = parse_changes(budget_text) if budget_text is not None else None
    except BudgetError as exc:
        raise _fail(f"--budget: {exc}") from None
    install_extras(prices_path, otel, command="resume")
    api_key = secret_option(api_key, api_key_file, "--api-key")
    path = db_path or default_db_path()
    _refuse_damaged(path)
    if run_ref is None:
        run_ref = _the_interrupted_run(path)
    try:
        rec = load_for_resume(path, run_ref)
    except GoldfiveError as exc:
        raise _fail(str(exc)) from None
    _refuse_hub_recorded(path, rec.run_id)
    launch = rec.launch
    if launch.get("command") != "run":
        raise _fail(
            f"run {rec.run_id} was not started by 'goldfive run' (its recording does not say how to build it "
            "again); continue it from your program with Runner.resume"
        )
    try:
        agent = load_agent(str(launch["agent"]), search_dir=launch.get("cwd"))
        planning = make_planner(launch.get("plan"), launch.get("base_url"), launch.get("model"), api_key)
    except GoldfiveError as exc:
        raise _fail(f"cannot build run {rec.run_id} again: {exc}") from None
    budget = None
    if changes is not None:  # applied to the recorded budget: the limits not named stay
        from goldfive.budget.model import Budget

        budget = (rec.budget or Budget()).changed(changes)
    factory = _factory(rec.run_id, path, agent, planning.planner, launch, budget)
    if headless:
        try:
            code = asyncio.run(run_headless(factory, db_path=path, out=sys.stdout, client=planning.client, record=False))
        except KeyboardInterrupt:
            click.echo("goldfive: interrupted", err=True)
            code = EXIT_INTERRUPTED
    else:
        from goldfive.cli.frontends import frontend

        code = frontend("run")(factory, db_path=path)
    raise click.exceptions.Exit(code)


def _refuse_hub_recorded(path: str, run_id: str) -> None:
    """A run a hub stored (its events sent by a runner, or started by the hub) is not this
    process's to continue: its recording's RunStarted says whatever its runner wrote, and
    nothing is imported from what a peer wrote."""
    from goldfive.store.registry import read_registration

    reg = read_registration(path, run_id)
    if reg is None:
        return
    if reg.started_by_hub:
        raise _fail(f"run {run_id} was started by the goldfive hub recording {path}; that hub continues it when it starts")
    who = f"runner token {reg.owner!r}" if reg.owner else "a runner"
    raise _fail(
        f"run {run_id} was recorded by a goldfive hub from {who} in another process; "
        "continue it where it ran (that process's own recording), not from the hub's database"
    )


def _refuse_damaged(path: str) -> None:
    """A recording SQLite finds damaged is not written into (as ``serve`` refuses it): one
    line naming the finding, nothing resumed."""
    from goldfive.store.history import check_database

    problem = check_database(path)
    if problem is not None:
        shown = " ".join("".join(ch if ch.isprintable() else "?" for ch in problem).split())
        raise _fail(f"the recording {path} is damaged ({shown[:200]}); nothing was resumed: restore it from a backup")


def _the_interrupted_run(path: str) -> str:
    """The one run in ``path`` without a terminal event; a clear line when none or several."""
    from goldfive.durable.store import ResumeRefused, open_log
    from goldfive.errors import ReplayError

    try:
        log = open_log(path)
        ids = log.unfinished_runs()
        last_ms = {r.run_id: r.last_emitted_at_ms for r in log.list_runs()} if len(ids) > 1 else {}
    except (ResumeRefused, ReplayError) as exc:
        raise _fail(str(exc)) from None
    if len(ids) > 1:
        from goldfive.cli.output import echo, field

        lines = [_run_line(log, run_id, last_ms.get(run_id)) for run_id in reversed(ids[-5:])]  # the latest first
        refused = _fail(f"{len(ids)} interrupted runs in {path}; name one (goldfive resume RUN):")
        more = [f"(and {len(ids) - 5} older)"] if len(ids) > 5 else []
        echo("".join(f"  {field(line)}\n" for line in lines + more).rstrip("\n"), err=True)
        raise refused
    if not ids:
        raise _fail(f"no interrupted run in {path}: every recorded run ended")
    return str(ids[0])


def _run_line(log: SqliteLog, run_id: str, last_ms: int | None) -> str:
    """``3f2a9c1d0b7e  12m05s ago  "write a haiku"``: the id a person types, how long ago its
    last event was, and its goal (as the runs screen shows a run)."""
    import time

    from goldfive.cli.ctl.hub import age
    from goldfive.terminal_text import terminal_safe

    # its first RunStarted, read through the log (a damaged row is skipped: the id and age still help)
    reading = log.history(run_id).events(kinds=("run_started",), chunk=1)
    started = next(reading, None)
    reading.close()
    goal, by_run = "", True
    if started is not None:
        goal = " ".join(terminal_safe(started.run_started.goal_summary).split())
        try:
            by_run = json.loads(started.run_started.launch_json or "{}").get("command") == "run"
        except (ValueError, AttributeError):
            by_run = True
    goal = goal if len(goal) <= 60 else goal[:59] + "…"
    ago = f"{age(time.time() - last_ms / 1000)} ago" if isinstance(last_ms, int) and last_ms else "-"
    # a demo's or a library's run: resume would refuse it, so say so in the list
    note = "" if by_run else "  (not by 'goldfive run': resume it from your program)"
    return f"{run_id[:12]}  {ago:>11}  " + (f'"{goal}"' if goal else "(no goal recorded)") + note


def _factory(run_id: str, store: str, agent: Any, planner: Any, launch: dict[str, Any], budget: Any = None) -> Any:
    def factory(sinks: list[object], channel: ControlChannel | None) -> tuple[Any, str]:
        from goldfive.adapters.frameworks import adapter_for
        from goldfive.run.config import RuntimeConfig
        from goldfive.runner import Runner
        from goldfive.settings import os_user

        runner = Runner.resuming(
            run_id, store=store, agent=adapter_for(agent), planner=planner, sinks=sinks, control=channel, launch=launch,
            config=RuntimeConfig(use_machine_rules=True, budget=budget, budget_author=os_user() if budget is not None else ""),
        )  # fmt: skip
        return runner, str(launch.get("goal", ""))

    return factory


def register(group: click.Group) -> None:
    group.add_command(resume_command)
