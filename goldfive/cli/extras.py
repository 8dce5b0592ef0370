"""``--prices FILE`` and ``--otel`` (on ``run``, ``demo``, ``serve`` and ``resume``) and
``--budget`` (on ``run``, ``demo`` and ``serve``): read and checked once, before anything
starts, then installed for every run this process starts (goldfive.run.defaults), with the
watchdog's thresholds from the environment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from goldfive.errors import GoldfiveError

__all__ = ["budget_option", "extras_options", "hub_reviewer", "install_extras", "make_reviewer", "review_options"]


def extras_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--otel", is_flag=True,
        help="Export the runs as OpenTelemetry traces (GenAI conventions) to the OTLP endpoint the OTEL_* variables name "
        "(default http://localhost:4318, http/protobuf); needs pip install 'goldfive[otel]'.",
    )(fn)  # fmt: skip
    return click.option(
        "--prices", "prices_path", metavar="FILE",
        help="Model prices (JSON, USD per million tokens) over the shipped table; a model with no price is recorded with its tokens only.",
    )(fn)  # fmt: skip


def budget_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--budget", "budget_text", metavar="LIMITS", help=help)


def review_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--review-instructions FILE|TEXT`` and ``--review-grace DURATION``: the approval policy
    "review" (docs/approvals.md#a-reviewer)."""
    fn = click.option(
        "--review-grace", metavar="DURATION", default=None,
        help="How long a reviewer's approve or reject waits for a person to overrule it, e.g. 5s, 500ms (default 2s).",
    )(fn)  # fmt: skip
    return click.option(
        "--review-instructions", metavar="FILE|TEXT", default=None,
        help="Turn on the reviewer: a model decides routine tool calls under these instructions (a file's text, "
        "else the text itself) and asks a person about the rest.",
    )(fn)  # fmt: skip


def _seconds(text: str, flag: str) -> float:
    raw = text.strip().lower()
    scale = 1.0
    if raw.endswith("ms"):
        raw, scale = raw[:-2], 0.001
    elif raw.endswith("s"):
        raw = raw[:-1]
    try:
        value = float(raw) * scale
    except ValueError:
        raise GoldfiveError(f"{flag} {text!r} is not a duration (for example 5s, 500ms or 2)") from None
    if not 0 <= value <= 3600:
        raise GoldfiveError(f"{flag} {text!r} must be between 0 s and an hour")
    return value


def make_reviewer(instructions: str | None, grace: str | None) -> Any:
    """The Reviewer ``--review-instructions`` and ``--review-grace`` ask for (None without
    instructions); GoldfiveError with a sentence for bad input."""
    import os

    from goldfive.approvals.reviewer import Reviewer

    if instructions is None:
        if grace is not None:
            raise GoldfiveError("--review-grace goes with --review-instructions FILE|TEXT")
        return None
    text = instructions
    if os.path.isfile(instructions):
        try:
            with open(instructions, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise GoldfiveError(f"--review-instructions {instructions!r}: cannot read it: {exc}") from None
    if not text.strip():
        raise GoldfiveError("--review-instructions is empty: say which calls the reviewer may approve or reject")
    grace_s = _seconds(grace, "--review-grace") if grace is not None else 2.0
    return Reviewer(text.strip(), grace_s=grace_s)


def hub_reviewer(reviewer: Any, approvers: Any) -> Any:
    """``serve``'s reviewer with ``--approvers``: never for a tool the rules name (only the
    operators they list may decide its calls)."""
    from dataclasses import replace

    return replace(reviewer, never=reviewer.never + tuple(pattern for pattern, _ in approvers.rules))


def install_extras(
    prices_path: str | None, otel: bool, *, command: str, as_sink: bool = True, budget_text: str | None = None, reviewer: Any = None
) -> Any:
    """Install the process's run defaults; returns the OTel sink (None without --otel), which
    every run of the process gets unless ``as_sink`` is False (a hub feeds it from its event
    hook). A bad file, variable or a missing extra is one line on stderr and exit 2."""
    from goldfive.budget import Budget
    from goldfive.run.defaults import RunDefaults, install_run_defaults
    from goldfive.settings import OTelSettings, watchdog_config
    from goldfive.usage.prices import load_prices

    try:
        budget = Budget.parse(budget_text) if budget_text is not None else None
        prices = load_prices(prices_path) if prices_path else None
        watchdog = watchdog_config()
        sink = None
        if otel:
            settings = OTelSettings.from_env()
            try:
                from goldfive.otel import OTelSink
            except ImportError:
                raise GoldfiveError("--otel needs the OpenTelemetry SDK: pip install 'goldfive[otel]'") from None
            sink = OTelSink(settings=settings)
    except GoldfiveError as exc:
        click.echo(f"goldfive {command}: error: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    install_run_defaults(RunDefaults(prices=prices, watchdog=watchdog, extra_sink=sink if as_sink else None, budget=budget, reviewer=reviewer))
    return sink
