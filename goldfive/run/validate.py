"""``validate_control``: the one check a control passes before any run acts on it.

Every boundary imports it (the run's ControlLoop, the gRPC service, the TUI's inputs), so a
limit raised in ``ControlLimits`` is raised everywhere at once.
"""

from __future__ import annotations

import json

from goldfive.control import ControlKind, ControlMessage, kind_name
from goldfive.run.config import DEFAULT_LIMITS, ControlLimits

#: Kinds only the intervention ladder originates; a remote client may not send them.
LADDER_KINDS = frozenset({ControlKind.GOLDFIVE_STEER, ControlKind.GOLDFIVE_PAUSE_ESCALATE})

#: Payload keys a control of this kind cannot do without.
_REQUIRED: dict[ControlKind, str] = {
    ControlKind.REWIND_TO: "task_id",
    ControlKind.APPROVE: "target_id",
    ControlKind.REJECT: "target_id",
}
#: Payload keys holding an id, held to ``max_id_chars``.
_ID_KEYS = ("task_id", "target_id", "annotation_id")
#: Free text a person typed, held to ``max_note_bytes`` and refused when blank.
_TEXT_KEYS: dict[ControlKind, tuple[str, str]] = {
    ControlKind.STEER: ("note", "steer note"),
    ControlKind.INJECT_MESSAGE: ("text", "message"),
}


def note_problem(what: str, text: str, limits: ControlLimits = DEFAULT_LIMITS) -> str:
    """Why ``text`` cannot be a steer note / injected message ("" when it can)."""
    if not text.strip():
        return f"{what} is empty"
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_note_bytes:
        return f"{what} is {size} bytes; the limit is {limits.max_note_bytes} bytes"
    return ""


def payload_size(msg: ControlMessage) -> int:
    """The payload's size as JSON in UTF-8 bytes. Raises ValueError / TypeError when it cannot
    be encoded (a value JSON has no form for, text that is not valid Unicode)."""
    text = json.dumps(msg.payload, ensure_ascii=False, allow_nan=False)
    return len(text.encode("utf-8"))


def validate_control(
    msg: ControlMessage, limits: ControlLimits = DEFAULT_LIMITS, *, allow_ladder_kinds: bool = True
) -> str:
    """Why ``msg`` cannot be acted on ("" when it can). The reason names the field and the limit.

    ``allow_ladder_kinds=False`` is for remote clients: GOLDFIVE_STEER and
    GOLDFIVE_PAUSE_ESCALATE are the intervention ladder's, never a person's.
    """
    kind = msg.kind
    if not isinstance(msg.id, str) or not msg.id:
        return "a control needs an id"
    if len(msg.id) > limits.max_id_chars:
        return f"control id is {len(msg.id)} characters; the limit is {limits.max_id_chars}"
    if not _encodable(msg.id):
        return "control id is not valid Unicode text (it holds a lone surrogate)"
    if not isinstance(msg.payload, dict):
        return f"payload must be a JSON object, got {type(msg.payload).__name__}"
    if not allow_ladder_kinds and kind in LADDER_KINDS:
        return f"{kind_name(kind)} is sent by the intervention ladder only"
    try:
        size = payload_size(msg) if msg.payload else 2  # "{}"
    except (TypeError, ValueError) as exc:
        return f"payload is not JSON-serialisable UTF-8: {_why(exc)}"
    if size > limits.max_control_bytes:
        return f"payload is {size} bytes; the limit is {limits.max_control_bytes} bytes"
    for key in _ID_KEYS:
        value = msg.payload.get(key)
        if value is not None and len(str(value)) > limits.max_id_chars:
            return f"payload.{key} is {len(str(value))} characters; the limit is {limits.max_id_chars}"
    if not isinstance(kind, ControlKind):
        return ""  # a custom verb (docs/protocol.md#custom-controls): its handler judges the rest
    text = _TEXT_KEYS.get(kind)
    if text is not None:
        key, what = text
        problem = note_problem(what, str(msg.payload.get(key, "") or ""), limits)
        if problem:
            return problem
    if kind is ControlKind.APPROVE and msg.payload.get("arguments") is not None and not isinstance(msg.payload["arguments"], dict):
        return "APPROVE payload.arguments must be a JSON object (the call's edited arguments)"
    required = _REQUIRED.get(kind)
    if required is not None and not str(msg.payload.get(required, "") or "").strip():
        return f"{kind_name(kind)} needs payload.{required}"
    return ""


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _why(exc: Exception) -> str:
    text = str(exc)
    if "surrogate" in text:
        return "it holds a lone surrogate (text that is not valid Unicode)"
    return text
