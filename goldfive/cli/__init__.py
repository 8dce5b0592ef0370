"""The ``goldfive`` command line."""

from __future__ import annotations

import sys

import click

from goldfive import __version__

from goldfive.cli.frontends import EXIT_NO_TUI, FRONTENDS, frontend  # the TUI registers in FRONTENDS

__all__ = ["EXIT_NO_TUI", "FRONTENDS", "frontend", "main"]


class _Commands(click.Group):
    """A Ctrl-C that no command handles itself ends the command with one line and exit code
    130, never a traceback or click's "Aborted!"."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(("\n" if sys.stderr.isatty() else "") + "goldfive: interrupted", err=True)
            ctx.exit(130)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
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
