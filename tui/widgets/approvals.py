"""The approvals pane: every pending approval with prompt, kind, tool, arguments and age; a
question with "?", its prompt and its options."""

from __future__ import annotations

from typing import ClassVar, Collection

from rich.text import Text

from goldfive.view import RunState
from ..format import age_text, clip, compact_json
from ..widgets.cursorlist import CursorList


class ApprovalsView(CursorList):
    COMPONENT_CLASSES: ClassVar[set[str]] = CursorList.COMPONENT_CLASSES | {
        "approvals--target",
        "approvals--dim",
        "approvals--empty",
    }

    def update_approvals(self, state: RunState, now_ms: int, read: Collection[str] = ()) -> None:
        """One row per approval: read mark, the tool (or the request's id), its age, then its
        arguments (what a person judges first) and the prompt, each clipped to the width."""
        target = self.get_component_rich_style("approvals--target", partial=True)
        dim = self.get_component_rich_style("approvals--dim", partial=True)
        width = max(40, self.scrollable_content_region.width or 80)
        rows: list[Text] = []
        keys: list[str] = []
        for a in state.approvals.values():
            row = Text(no_wrap=True, overflow="crop")
            row.append(" ✓ " if a.target_id in read else " · ", "green" if a.target_id in read else "cyan")
            row.append("? question" if a.is_question else a.tool_name or a.target_id, target)
            row.append(f"  {age_text(now_ms - a.requested_ms)}")
            if a.timeout_ms:
                left = a.timeout_ms - (now_ms - a.requested_ms)
                row.append(f" ({age_text(left)} left)", dim)
            if a.review:  # the run's reviewer: asked a person, or decides unless overruled
                row.append("  reviewer: asks you" if a.review == "ask" else f"  reviewer: {a.review}", "yellow")
            args = " / ".join(a.options) if a.is_question else compact_json(a.args)
            room = width - row.cell_len - 2
            prompt = f'"{a.prompt}"' if a.prompt else ""
            if a.is_question and prompt and room > 8:  # the question first: it is what is asked
                shown = clip(prompt, room if not args else max(room * 2 // 3, min(room, 24)))
                row.append(f"  {shown}")
                room -= len(shown) + 2
                prompt = ""
            if args and room > 8:
                # The arguments whole when they fit beside a glimpse of the prompt, else most of
                # the room; the prompt gets what they leave (Enter shows both whole).
                args_room = room if not prompt or len(args) <= room - 12 else max(room * 2 // 3, min(room, 24))
                shown = clip(args, args_room)
                row.append(f"  {shown}", dim)
                room -= len(shown) + 2
            if prompt and room > 8:
                row.append(f"  {clip(prompt, room)}")
            rows.append(row)
            keys.append(a.target_id)
        self.set_rows(keys, rows)
        self.border_title = f"Approvals ({len(keys)})"
