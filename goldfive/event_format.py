"""One compact, human-readable line per event (``goldfive demo --headless``, ``ctl tail``).

What each kind shows comes from the one table of event kinds (``goldfive.event_kinds``); this
module only lays the line out for a terminal, with every field (a terminal has the room).
``EventLines`` is the stream's form: one line per control, as the TUI's log shows it (its
``control_received`` and ``control_acked`` make one ``control`` line, printed at the ack).
"""

from __future__ import annotations

from dataclasses import replace

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


#: A control's ack on its control's line: what it says after the arrow (its kind and id are
#: on the line already).
_OUTCOME = replace(EVENT_KINDS["control_acked"], fields=tuple(f for f in EVENT_KINDS["control_acked"].fields if f.name not in ("kind", "control_id")))


def format_control(received: Event, acked: Event | None) -> str:
    """A control's one line: ``<sequence> control <kind> <id> by <author> "<summary>" →
    <result> as <applied_as> <detail>`` (the ack's sequence), or, with no ack (the stream
    ended first), ``... received, no ack``."""
    said = render_fields(EVENT_KINDS["control_received"], received.control_received, clip=_clip, brief=False)
    if acked is None:
        outcome, sequence = "received, no ack", received.sequence
    else:
        outcome, sequence = "→ " + render_fields(_OUTCOME, acked.control_acked, clip=_clip, brief=False), acked.sequence
    return terminal_safe(f"{sequence:>4} {'control':<18} {said} {outcome}").rstrip()


class EventLines:
    """``format_event`` for a stream, one line per control: a ``control_received`` is held
    until its ``control_acked`` and both print as one line then (an ack comes at once; what
    the control did follows it). An ack whose control this stream never saw keeps its own
    line; ``flush`` (the stream's end) prints a control still waiting for its ack."""

    def __init__(self) -> None:
        self._held: dict[str, Event] = {}

    def lines(self, event: Event) -> list[str]:
        kind = events.kind_of(event)
        if kind == "control_received":
            self._held[event.control_received.control.id] = event
            return []
        if kind == "control_acked":
            received = self._held.pop(event.control_acked.ack.control_id, None)
            if received is not None:
                return [format_control(received, event)]
        return [format_event(event)]

    def flush(self) -> list[str]:
        held, self._held = list(self._held.values()), {}
        return [format_control(ev, None) for ev in held]
