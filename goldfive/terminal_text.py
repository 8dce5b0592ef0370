"""Text from a run made safe to print on a person's terminal.

What a runner sends (goals, task titles, tool arguments, prompts, event details, run ids) is
printed by ``ctl``, ``serve``, ``run --headless`` and the demo. Printed raw, an escape sequence
in it is obeyed by the terminal: OSC 52 writes the clipboard, OSC 0 sets the window title,
``CSI 2J`` clears the screen, a lone CR rewrites the line it is on. :func:`terminal_safe` is the
one function every printing boundary applies: escape sequences are removed whole (7-bit ``ESC``
and 8-bit C1 introducers alike), then every remaining C0 control, DEL and C1 control.
"""

from __future__ import annotations

import re

__all__ = ["drop_controls", "has_terminal_controls", "terminal_safe"]

# ECMA-48: CSI params* intermediates* final; the control strings (OSC, DCS, SOS, PM, APC) run
# to BEL or ST, or to the end of the text when unterminated (a terminal would swallow what
# follows them anyway); any other ESC takes intermediates* and one final byte.
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|\Z)"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?",
    re.DOTALL,
)
#: Every control a terminal acts on: C0 (0x00-0x1f), DEL (0x7f), C1 (0x80-0x9f).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: The same, less newline and tab: what a multi-line field may not hold.
_CONTROLS_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_BREAKS = re.compile(r"\r\n|[\n\t]")


def has_terminal_controls(text: str, *, multiline: bool = False) -> bool:
    """True when ``text`` holds a control character :func:`terminal_safe` would remove."""
    return bool((_CONTROLS_BUT_LINES if multiline else _CONTROLS).search(text))


def terminal_safe(text: str, *, multiline: bool = False) -> str:
    """``text`` with nothing a terminal would act on.

    Escape sequences go whole, then the other C0 controls, DEL and the C1 controls.
    ``multiline=False`` (a field printed inside one line: a run's goal in a ``ctl runs`` row,
    an event detail): a newline or tab becomes a space, so a field cannot start a line of its
    own that would pass for another row. ``multiline=True`` (a block printed as is, several
    rows already made safe, a traceback): newlines and tabs stay, CR goes."""
    if not has_terminal_controls(text, multiline=multiline):
        return text  # the common case: one scan, no copy
    text = _SEQUENCES.sub("", text)
    if not multiline:
        text = _LINE_BREAKS.sub(" ", text)
        return _CONTROLS.sub("", text)
    return _CONTROLS_BUT_LINES.sub("", text.replace("\r\n", "\n"))


def drop_controls(text: str) -> str:
    """``text`` less its control characters (C0, DEL, C1), each removed alone.

    For a renderer that has measured the text already (the TUI's line filter): a control is
    zero cells wide, so the line keeps its width; what followed an ``ESC`` stays as plain,
    harmless text."""
    return _CONTROLS.sub("", text) if _CONTROLS.search(text) else text
