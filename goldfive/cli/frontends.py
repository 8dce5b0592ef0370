"""The terminal front-ends the commands that open a UI use (demo, run, replay, attach, web).

A module of its own (re-exported by ``goldfive.cli``) so the subcommand modules reach it
without importing the package that registers them.
"""

from __future__ import annotations

from typing import Any, Callable

import click

__all__ = ["EXIT_NO_TUI", "FRONTENDS", "frontend"]

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
