"""Printing what a run or a hub said: every line the commands print goes through here.

A field inside a row (a goal, a task title, an ack's detail) is made one line with
:func:`field`; :func:`echo` is the last boundary before the terminal and removes whatever
control characters are left (keeping the newlines between rows). See
:mod:`goldfive.terminal_text` for what is removed and why.
"""

from __future__ import annotations

import logging
from typing import IO

import click

from goldfive.terminal_text import terminal_safe

__all__ = ["SafeFormatter", "echo", "field", "safe_log_lines", "write_lines"]


def field(text: object) -> str:
    """A value printed inside one line: no escape sequences, no controls, no line breaks."""
    return terminal_safe(str(text))


def echo(text: str, *, err: bool = False) -> None:
    """``click.echo`` of ``text`` made safe for a terminal (its own newlines kept)."""
    click.echo(terminal_safe(text, multiline=True), err=err)


def write_lines(out: IO[str], lines: list[str]) -> None:
    """Each of ``lines`` made one safe line, written to ``out`` in one write and flushed."""
    out.write("".join(field(line) + "\n" for line in lines))
    out.flush()


class SafeFormatter(logging.Formatter):
    """A log line (and its traceback) made safe for a terminal: a log message can quote a run
    (its id, a reason it sent)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record), multiline=True)


def safe_log_lines() -> None:
    """The lines Python prints when logging was not configured (``logging.lastResort``, the
    commands' warnings on stderr) go through :class:`SafeFormatter`; a program that configures
    logging keeps its own handlers."""
    if logging.lastResort is not None:
        logging.lastResort.setFormatter(SafeFormatter())
