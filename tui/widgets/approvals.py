"""The approvals pane: every pending approval with prompt, kind, tool, arguments and age."""

from __future__ import annotations

from typing import ClassVar

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

    def update_approvals(self, state: RunState, now_ms: int) -> None:
        target = self.get_component_rich_style("approvals--target", partial=True)
        dim = self.get_component_rich_style("approvals--dim", partial=True)
        rows: list[Text] = []
        keys: list[str] = []
        for a in state.approvals.values():
            row = Text(" ▶ ")
            row.append(a.target_id, target)
            row.append(f"  {a.kind}", dim)
            if a.tool_name and a.tool_name != a.target_id:
                row.append(f" {a.tool_name}", dim)
            row.append(f'  "{clip(a.prompt, 60)}"')
            args = compact_json(a.args)
            if args:
                row.append(f"  {clip(args, 70)}", dim)
            row.append(f"  {age_text(now_ms - a.requested_ms)}")
            if a.timeout_ms:
                left = a.timeout_ms - (now_ms - a.requested_ms)
                row.append(f" (times out in {age_text(left)})", dim)
            rows.append(row)
            keys.append(a.target_id)
        self.set_rows(keys, rows)
        self.border_title = f"Approvals ({len(keys)})"
