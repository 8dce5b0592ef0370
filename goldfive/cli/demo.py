"""``goldfive demo``: the built-in offline scenario, under the TUI or headless."""

from __future__ import annotations

import asyncio
import sys

import click

from goldfive.cli.extras import budget_option, extras_options, install_extras, make_reviewer, review_options

__all__ = ["demo_command", "register"]

#: ``demo --headless --approvals wait`` has nobody to answer: say how to get someone.
WAIT_HEADLESS = (
    "--approvals wait with --headless would wait forever: nothing here can answer the approval. "
    "Host the run instead and answer it from another shell: `goldfive serve demo`, then "
    "`goldfive ctl 127.0.0.1:7531 approve RUN ID` (RUN and ID from `goldfive ctl 127.0.0.1:7531 tail RUN`)."
)

@click.command("demo")
@click.option("--speed", type=float, default=1.0, show_default=True, help="Pace of the scenario; 2 is twice as fast.")
@click.option("--headless", is_flag=True, help="No TUI: print one line per event, exit 0 when the run completes.")
@click.option(
    "--approvals",
    type=click.Choice(["approve", "reject", "wait", "review"]),
    default="approve",
    show_default=True,
    help="Headless: how approval requests are answered (wait is refused headless: nobody could answer). "
    "review (TUI only): the demo's model decides routine calls under --review-instructions and asks you about the rest.",
)
@click.option("--base-url", default=None, help="Use an OpenAI-compatible server instead of the offline model.")
@click.option("--model", default=None, help="Model name on that server.")
@click.option(
    "--runs",
    type=click.IntRange(1, 50),
    default=None,
    help="Open the runs screen over this many demo runs in this process (different goals; offline, no network).",
)
@review_options
@extras_options
@budget_option("How much each demo run may use, e.g. tokens=50000,usd=2 (also model_calls, tool_calls, seconds): at a limit it pauses and asks.")
def demo_command(
    speed: float, headless: bool, approvals: str, base_url: str | None, model: str | None, runs: int | None,
    prices_path: str | None = None, otel: bool = False, budget_text: str | None = None,
    review_instructions: str | None = None, review_grace: str | None = None,
) -> None:
    """Run the slide-deck demo (offline, no API key needed)."""
    reviewer = None
    if approvals == "review":
        if review_instructions is None:
            raise click.UsageError("--approvals review needs --review-instructions FILE|TEXT: which calls the reviewer may decide")
        if headless:
            raise click.UsageError("--approvals review is for the TUI: headless, nothing here could answer what the reviewer escalates")
        from goldfive.errors import GoldfiveError

        try:
            reviewer = make_reviewer(review_instructions, review_grace)
        except GoldfiveError as exc:
            raise click.UsageError(str(exc)) from None
    elif review_instructions is not None or review_grace is not None:
        raise click.UsageError("--review-instructions and --review-grace go with --approvals review")
    install_extras(prices_path, otel, command="demo", budget_text=budget_text, reviewer=reviewer)
    if speed <= 0:
        raise click.BadParameter("must be positive", param_hint="--speed")
    if runs is not None:
        if headless or base_url is not None or model is not None:
            raise click.UsageError("--runs opens the runs screen over offline demo runs: it does not go with --headless, --base-url or --model")
        from goldfive.cli.frontends import frontend

        code = frontend("demo")(runs=runs, speed=speed)
        raise click.exceptions.Exit(code if isinstance(code, int) else 0)
    if headless and approvals == "wait":
        raise click.UsageError(WAIT_HEADLESS)
    if headless:
        from goldfive.demo import run_headless

        out = sys.stdout  # read now (not at import), so a redirected stdout is honoured
        try:
            code = asyncio.run(run_headless(speed=speed, approvals=approvals, out=out, base_url=base_url, model=model))  # type: ignore[arg-type]
        except KeyboardInterrupt:
            from goldfive.cli.local import EXIT_INTERRUPTED

            click.echo("goldfive: interrupted", err=True)
            code = EXIT_INTERRUPTED
        raise click.exceptions.Exit(code)
    from goldfive.cli.frontends import frontend

    code = frontend("demo")(speed=speed, base_url=base_url, model=model)
    raise click.exceptions.Exit(code if isinstance(code, int) else 0)


def register(group: click.Group) -> None:
    group.add_command(demo_command)
