"""The ``goldfive`` command line."""

from __future__ import annotations

from typing import Any, Callable

import click

from goldfive import __version__

#: Terminal front-ends for the commands that open a UI (demo, run, replay, attach), by name.
#: The package that provides a TUI registers them (``goldfive_tui.cli``, the console script's entry
#: point); the core never imports it. Without one, those commands say so and --headless works.
FRONTENDS: dict[str, Callable[..., Any]] = {}
EXIT_NO_TUI = 2


def frontend(name: str) -> Callable[..., Any]:
    """The registered front-end ``name``, or a one-line error and exit code 2."""
    opener = FRONTENDS.get(name)
    if opener is None:
        click.echo(f"goldfive: the terminal UI is not available here (no {name!r} front-end); try --headless", err=True)
        raise click.exceptions.Exit(EXIT_NO_TUI)
    return opener


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="goldfive")
def main() -> None:
    """Steer an LLM agent while it runs."""
    from goldfive.cli.output import safe_log_lines

    safe_log_lines()  # warnings can quote what a run sent


# The subcommand modules import nothing from here at import time (``frontend`` is looked up
# when a command runs), so registering them after ``main`` exists cannot cycle.
from goldfive.cli import demo, hook, local, notify, remote, resume, runs  # noqa: E402

local.register(main)  # run, replay
demo.register(main)  # demo
remote.register(main)  # serve, attach, ctl
resume.register(main)  # resume
hook.register(main)  # hook claude-code
notify.register(main)  # notify ntfy|slack
runs.register(main)  # runs, runs prune

from goldfive.cli import web  # noqa: E402

web.register(main)  # web
