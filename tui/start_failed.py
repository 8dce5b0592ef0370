"""What a browser tab of ``goldfive web`` shows when its command fails before any screen
opened (a recording that does not exist, a hub that refuses the token): the error, on the
page, instead of textual-serve's splash screen forever.

``serve_tab`` runs one tab's command (``python -m goldfive_tui.cli COMMAND``) under Textual's
web driver; the command's stderr is kept, and a failure without a screen shows it.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import ClassVar, TextIO

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from goldfive.terminal_text import terminal_safe

from .widgets.footer import FitFooter

__all__ = ["StartFailedApp", "serve_tab", "under_web_driver"]


def under_web_driver() -> bool:
    """This process is a tab of ``goldfive web`` (textual-serve sets the web driver)."""
    return os.environ.get("TEXTUAL_DRIVER", "").endswith("WebDriver")


class StartFailedApp(App[None]):
    """The error of a command that could not start, and how to close the tab."""

    TITLE = "goldfive"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "Close", id="start_failed.close")]
    DEFAULT_CSS = """
    #start-failed { padding: 1 2; }
    #start-failed-title { text-style: bold; color: $error; }
    #start-failed-error { margin: 1 0; }
    """

    def __init__(self, command: list[str], error: str) -> None:
        super().__init__()
        self.command = command
        self.error = error

    def compose(self) -> ComposeResult:
        shown = terminal_safe(" ".join(["goldfive", *self.command]))
        with VerticalScroll(id="start-failed"):
            yield Static(f"{shown} could not start:", id="start-failed-title", markup=False)
            yield Static(terminal_safe(self.error.strip() or "(it printed no reason)", multiline=True), id="start-failed-error", markup=False)
            yield Static(
                "Fix the command, then stop goldfive web (Ctrl+C where it runs) and start it again. "
                "Reloading this page runs the same command again.",
                markup=False,
            )
        yield FitFooter()


class _Tee(io.TextIOBase):
    def __init__(self, *outs: TextIO) -> None:
        self.outs = outs

    def write(self, text: str) -> int:
        for out in self.outs:
            out.write(text)
        return len(text)

    def flush(self) -> None:
        for out in self.outs:
            out.flush()


def serve_tab(argv: list[str]) -> int:
    """Run the tab's command; when it fails before its app ran, show why on the page."""
    from goldfive.cli import main

    from .app import GoldfiveApp

    kept = io.StringIO()
    code: int | str | None = 0
    try:
        with contextlib.redirect_stderr(_Tee(sys.stderr, kept)):  # type: ignore[type-var]
            main.main(args=argv, prog_name="goldfive", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
    failed = code not in (0, None)
    if failed and not GoldfiveApp.mounted_once:
        StartFailedApp(argv, kept.getvalue() if isinstance(code, int) else f"{kept.getvalue()}{code}").run()
    return code if isinstance(code, int) else (1 if failed else 0)
