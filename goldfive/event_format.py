"""One compact, human-readable line per event (``goldfive demo --headless``, ``ctl tail``).

What each kind shows comes from the one table of event kinds (``goldfive.event_kinds``); this
module only lays the line out for a terminal, with every field (a terminal has the room).
"""

from __future__ import annotations

from goldfive import events
from goldfive.event_kinds import EVENT_KINDS, render_fields
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.terminal_text import terminal_safe

#: A terminal line shows at least this much of each text, however short the table's width.
_CLIP = 100


def _clip(text: str, width: int = _CLIP) -> str:
    text = " ".join(terminal_safe(str(text)).split())
    limit = max(width, _CLIP) if width else 0
    return text if not limit or len(text) <= limit else text[: limit - 1] + "…"


def format_event(event: Event) -> str:
    """``<sequence> <kind> <key fields>`` on one line, e.g.
    ``  12 task_completed     research "collected 5 key facts..."``. What the run wrote is
    made safe for a terminal (no escape sequences or control characters)."""
    kind = events.kind_of(event) or "(empty)"
    info = EVENT_KINDS.get(kind)
    if info is not None:
        detail = render_fields(info, getattr(event, kind), clip=_clip, brief=False)
    else:  # a kind this version's table does not know (a newer peer's)
        detail = _clip(str(getattr(event, kind, "")) if kind != "(empty)" else "")
    return terminal_safe(f"{event.sequence:>4} {kind:<18} {detail}").rstrip()
