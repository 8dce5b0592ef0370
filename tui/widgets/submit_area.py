"""A TextArea whose ctrl+s (or ctrl+enter) submits what is typed.

The submit key is the area's own binding, so it is handled in order with the keys typed
into the area. As a priority binding of the screen it would run as soon as it arrived,
overtaking keys still queued for the area (a paste, keys sent faster than they are drawn),
and submit the text cut short: a steer note missing its last line, or a tool call's edited
arguments half typed and approved.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea


class SubmitArea(TextArea):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+s,ctrl+enter", "submit", "Submit", show=False)]

    class Submitted(Message):
        """ctrl+s in ``area``: ``area.text`` is everything typed before it."""

        def __init__(self, area: SubmitArea, mode: str = "") -> None:
            super().__init__()
            self.area = area
            #: Which send key it was, when the area has more than one ("" for ctrl+s).
            self.mode = mode

        @property
        def control(self) -> SubmitArea:
            return self.area

    def action_submit(self, mode: str = "") -> None:
        self.post_message(self.Submitted(self, mode))
