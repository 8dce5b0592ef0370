"""The ``goldfive`` console script's first step, before anything heavy is imported.

Importing the commands takes most of a second; a Ctrl-C in that time would print Python's
KeyboardInterrupt traceback. Here it is one line, ``goldfive: interrupted``, and exit code
130 (the shell's convention), as a Ctrl-C during a command is (``goldfive.cli``).
"""

from __future__ import annotations

import sys

__all__ = ["main"]

EXIT_INTERRUPTED = 130


def interrupted() -> None:
    # On a terminal the ^C echo has no newline: the line starts after it.
    print(("\n" if sys.stderr.isatty() else "") + "goldfive: interrupted", file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)


def main() -> None:
    try:
        from .cli import main as commands
    except KeyboardInterrupt:
        interrupted()
    commands()
