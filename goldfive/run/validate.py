"""``accept`` / ``validate_control``: the one check a control passes before any run acts on
it, which also decodes its payload (``goldfive.controls``) once.

Every boundary imports it (the run's ControlLoop, the gRPC service, the TUI's inputs), so a
limit raised in ``ControlLimits`` is raised everywhere at once.
"""

from __future__ import annotations

from typing import Any

from goldfive.clean import json_encoder
from goldfive.control import ControlKind, ControlMessage, kind_name
from goldfive.controls.payloads import Answer, Control, ControlPayload, Inject, Steer, SteerQueue, SteerQueueOp, decode_payload
from goldfive.errors import ControlPayloadError
from goldfive.run.config import DEFAULT_LIMITS, ControlLimits

__all__ = ["LADDER_KINDS", "accept", "note_problem", "payload_size", "validate_control"]

#: Kinds only the intervention ladder originates; a remote client may not send them.
LADDER_KINDS = frozenset({ControlKind.GOLDFIVE_STEER, ControlKind.GOLDFIVE_PAUSE_ESCALATE})

#: The payload classes holding free text a person typed, which ``accept`` checks.
_FREE_TEXT = frozenset({Steer, Inject, Answer, SteerQueue})

#: Payload keys holding an id, held to ``max_id_chars``.
_ID_KEYS = ("task_id", "target_id", "annotation_id")


def note_problem(what: str, text: str, limits: ControlLimits = DEFAULT_LIMITS) -> str:
    """Why ``text`` cannot be a steer note / injected message ("" when it can)."""
    if not text.strip():
        return f"{what} is empty"
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_note_bytes:
        return f"{what} is {size} bytes; the limit is {limits.max_note_bytes} bytes"
    return ""


#: ``json.dumps(payload, ensure_ascii=False, allow_nan=False)``, its encoder made once.
_payload_json = json_encoder(ensure_ascii=False, allow_nan=False)


def payload_size(msg: ControlMessage) -> int:
    """The payload's size as JSON in UTF-8 bytes. Raises ValueError / TypeError when it cannot
    be encoded (a value JSON has no form for, text that is not valid Unicode)."""
    text = _payload_json(msg.payload)
    return len(text.encode("utf-8"))


def accept(
    msg: ControlMessage, limits: ControlLimits = DEFAULT_LIMITS, *, allow_ladder_kinds: bool = True
) -> Control[ControlPayload]:
    """``msg`` checked and its payload decoded: what a run acts on. Raises ControlPayloadError
    whose message names the field and the limit.

    ``allow_ladder_kinds=False`` is for remote clients: GOLDFIVE_STEER and
    GOLDFIVE_PAUSE_ESCALATE are the intervention ladder's, never a person's.
    """
    problem = _envelope_problem(msg, limits, allow_ladder_kinds)
    if problem:
        raise ControlPayloadError(problem)
    payload = decode_payload(msg.kind, msg.payload)
    if payload.__class__ not in _FREE_TEXT:  # most kinds carry no text a person typed
        return Control(msg, payload)
    # Free text a person typed: held to max_note_bytes and refused when blank.
    if isinstance(payload, Steer):
        problem = note_problem("steer note", payload.note, limits)
    elif isinstance(payload, Inject):
        problem = note_problem("message", payload.text, limits)
    elif isinstance(payload, Answer):
        if payload.option and payload.text:
            raise ControlPayloadError("ANSWER takes text or an option, not both", "option")
        if not payload.option:
            problem = note_problem("answer text", payload.text, limits)
    elif isinstance(payload, SteerQueue) and payload.op is SteerQueueOp.EDIT:
        problem = note_problem("the edited note", payload.text, limits)
    if problem:
        raise ControlPayloadError(problem, "note" if isinstance(payload, Steer) else "text")
    return Control(msg, payload)


def validate_control(
    msg: ControlMessage, limits: ControlLimits = DEFAULT_LIMITS, *, allow_ladder_kinds: bool = True
) -> str:
    """Why ``msg`` cannot be acted on ("" when it can): ``accept``'s refusal as text."""
    try:
        accept(msg, limits, allow_ladder_kinds=allow_ladder_kinds)
    except ControlPayloadError as exc:
        return str(exc)
    return ""


def _envelope_problem(msg: ControlMessage, limits: ControlLimits, allow_ladder_kinds: bool) -> str:
    """What every control is held to, whatever its kind: its id, the payload's size and ids."""
    if not isinstance(msg.id, str) or not msg.id:
        return "a control needs an id"
    if len(msg.id) > limits.max_id_chars:
        return f"control id is {len(msg.id)} characters; the limit is {limits.max_id_chars}"
    if not (msg.id.isascii() or _encodable(msg.id)):
        return "control id is not valid Unicode text (it holds a lone surrogate)"
    payload: Any = msg.payload
    if not isinstance(payload, dict):
        return f"payload must be a JSON object, got {type(payload).__name__}"
    if not allow_ladder_kinds and msg.kind in LADDER_KINDS:
        return f"{kind_name(msg.kind)} is sent by the intervention ladder only"
    if not payload:  # PAUSE, RESUME, STATUS_QUERY: nothing more to check
        return ""
    if not _surely_small(payload, limits.max_control_bytes):
        try:
            size = payload_size(msg)
        except (TypeError, ValueError) as exc:
            return f"payload is not JSON-serialisable UTF-8: {_why(exc)}"
        if size > limits.max_control_bytes:
            return f"payload is {size} bytes; the limit is {limits.max_control_bytes} bytes"
    for key in _ID_KEYS:
        value = payload.get(key)
        if value is not None and len(str(value)) > limits.max_id_chars:
            return f"payload.{key} is {len(str(value))} characters; the limit is {limits.max_id_chars}"
    return ""


#: Bytes one character can take in the JSON text at most (a control character as \u001f).
_MAX_BYTES_PER_CHAR = 6


def _surely_small(payload: dict[str, Any], limit: int) -> bool:
    """A flat payload of text, booleans, small integers and nulls that encodes and whose JSON
    cannot exceed ``limit`` bytes: the common case, answered without building the JSON
    (``payload_size`` does that for anything else, and says what is wrong)."""
    bound = 2  # {}
    for key, value in payload.items():
        if type(key) is not str or not (key.isascii() or _encodable(key)):
            return False
        if value is None or value is True or value is False:
            n = 5
        elif type(value) is str:
            if not (value.isascii() or _encodable(value)):
                return False
            n = len(value) * _MAX_BYTES_PER_CHAR + 2
        elif type(value) is int and value.bit_length() < 64:
            n = 20
        else:
            return False
        bound += n + len(key) * _MAX_BYTES_PER_CHAR + 4  # "key": value,
    return bound <= limit


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
