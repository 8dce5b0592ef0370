"""What the steer and inject inputs accept: the run's own limits, through ``validate_control``."""

from __future__ import annotations

from goldfive.control import ControlKind, ControlMessage
from goldfive.run.config import DEFAULT_LIMITS
from goldfive.run.validate import validate_control


def validate_steer_note(note: str) -> str | None:
    """Why a steer note must not be sent, or None. The limit is the run's own
    (``goldfive.run.ControlLimits``), checked by the same ``validate_control``."""
    if not note.strip():
        return "An empty note cannot steer the run: type what should change."
    if validate_control(ControlMessage(ControlKind.STEER, payload={"note": note})):
        size, limit = len(note.encode("utf-8", "surrogatepass")), DEFAULT_LIMITS.max_note_bytes
        return f"The note is {size:,} bytes; the limit is {limit // 1024} KiB ({limit:,} bytes)."
    return None


def validate_message(text: str) -> str | None:
    """Why an injected message must not be sent, or None."""
    if not text.strip():
        return "Type a message first (Esc cancels)."
    problem = validate_control(ControlMessage(ControlKind.INJECT_MESSAGE, payload={"text": text}))
    return f"{problem[0].upper()}{problem[1:]}." if problem else None
