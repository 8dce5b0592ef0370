"""Text from outside (agents, tools, people) made encodable before it goes into an event.

Protobuf refuses a string it cannot encode as UTF-8 (a lone surrogate), and that would fail
the whole event. ``clean_text`` replaces each unencodable code point with U+FFFD and counts it
(``text_replacements``); valid text costs one ``isascii`` or ``encode`` check.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import Any, Callable, TypeVar

from goldfive.control import ControlAck, ControlKind, ControlMessage
from goldfive.types import Goal, Plan, Task, TaskEdge

_T = TypeVar("_T")
_R = TypeVar("_R")

_replaced = 0
_replaced_lock = threading.Lock()


def clean_text(text: str) -> str:
    """``text`` made encodable as UTF-8: each lone surrogate becomes U+FFFD.

    A surrogate pair (text that was UTF-16 once) becomes the character it spells. Every
    replacement is counted in ``text_replacements()``. Valid text is returned as is."""
    try:
        if text.isascii():  # O(1) in CPython: the common case costs one call
            return text
    except AttributeError:
        pass
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _replace_surrogates(text)
    return text


def _replace_surrogates(text: str) -> str:
    global _replaced
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    with _replaced_lock:
        _replaced += fixed.count("\ufffd") - text.count("\ufffd")
    return fixed


def text_replacements() -> int:
    """Code points ``clean_text`` replaced with U+FFFD in this process so far."""
    return _replaced


def clean_json(value: Any) -> Any:
    """A JSON-like value with every string in it (keys included) cleaned."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_json(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value


def json_text(value: Any) -> str:
    """``value`` as sorted JSON text, made encodable: dumped with ``ensure_ascii=False`` (a lone
    surrogate stays raw inside its JSON string, keys included) and the text cleaned once, so a
    surrogate becomes U+FFFD where it stood. (``ensure_ascii=True`` would write it as a "\\ud800"
    escape, which strict JSON readers refuse and lenient ones turn back into a surrogate.) One
    ``isascii`` check for the usual text, instead of a walk over the value."""
    text = _sorted_json(value)
    return text if text.isascii() else clean_text(text)  # (ASCII, nearly all: no call)


#: The json module's C encoder factory (None without its C accelerator).
_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)

#: What ``json_encoder`` checks its C encoder against once: every kind of value it writes.
_SAMPLE: Any = {"b": [1, -2.5, 1e300, None, True, False], "a": "tab\t \"quoted\" é \u2028", "c": {"z": [], "y": {}}}


def json_encoder(
    *,
    ensure_ascii: bool = True,
    sort_keys: bool = False,
    separators: tuple[str, str] = (", ", ": "),
    default: Callable[[Any], Any] | None = None,
    allow_nan: bool = True,
) -> Callable[[Any], str]:
    """``json.dumps`` with these options as a function whose encoder is made once, here.

    ``json.dumps(value, **options)`` builds a ``JSONEncoder`` per call, and even a kept
    ``JSONEncoder(...).encode`` builds a new C encoder (``c_make_encoder``) on every call; this
    one builds it once. It runs without the circular-reference markers (a dict shared by every
    call would not be safe across threads): a value that holds itself recurses until Python's
    recursion limit, and is then dumped again by ``JSONEncoder`` to raise what ``json.dumps``
    raises (ValueError "Circular reference detected"). The text is ``json.dumps``'s, byte for
    byte. Without the C accelerator, ``JSONEncoder(...).encode`` itself."""
    item_sep, key_sep = separators
    encoder = json.JSONEncoder(
        ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=separators, default=default, allow_nan=allow_nan
    )
    full = encoder.encode
    make = _c_make_encoder
    if make is None:  # pragma: no cover - CPython always has _json
        return full
    basestring = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    # c_make_encoder is the json module's own, not public API: its arguments (markers, default,
    # encoder, indent, key separator, item separator, sort_keys, skipkeys, allow_nan) are those
    # of CPython 3.11-3.13. A Python whose C encoder takes other arguments, or writes other
    # text for a sample, gets the public encoder instead (slower, never wrong).
    try:
        fast = make(None, encoder.default, basestring, None, key_sep, item_sep, sort_keys, False, allow_nan)
        if "".join(fast(_SAMPLE, 0)) != full(_SAMPLE):
            return full
    except Exception:  # another signature: TypeError, or whatever that version raises
        return full

    def encode(value: Any) -> str:
        try:
            return "".join(fast(value, 0))
        except RecursionError:
            return full(value)  # a value that holds itself: json.dumps's own error (or its RecursionError)

    return encode


#: ``json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)``, its encoder made once:
#: an approval cycle dumps its arguments, its schema, and the tool's step.
_sorted_json = json_encoder(ensure_ascii=False, sort_keys=True, default=str)


def clean_map(values: dict[str, str] | None) -> dict[str, str]:
    return {clean_text(k): clean_text(v) for k, v in values.items()} if values else {}


def encodable(build: Callable[[_T], _R], value: _T, clean: Callable[[_T], _T]) -> _R:
    """``build(value)``, or ``build(clean(value))`` when some text in it cannot be encoded.

    For values converted by ``conv``: valid input (nearly all of it) pays nothing."""
    try:
        return build(value)
    except UnicodeEncodeError:
        return build(clean(value))


def clean_goal(goal: Goal) -> Goal:
    return replace(
        goal, id=clean_text(goal.id), summary=clean_text(goal.summary), metadata=clean_map(goal.metadata)
    )


def clean_task(task: Task) -> Task:
    return replace(
        task,
        id=clean_text(task.id),
        title=clean_text(task.title),
        description=clean_text(task.description),
        assignee_agent_id=clean_text(task.assignee_agent_id),
    )


def clean_plan(plan: Plan) -> Plan:
    return replace(
        plan,
        tasks=[clean_task(t) for t in plan.tasks],
        edges=[TaskEdge(clean_text(e.from_task_id), clean_text(e.to_task_id)) for e in plan.edges],
        id=clean_text(plan.id),
        run_id=clean_text(plan.run_id),
        goal_ids=[clean_text(g) for g in plan.goal_ids],
        summary=clean_text(plan.summary),
        revision_reason=clean_text(plan.revision_reason),
    )


def clean_control(msg: ControlMessage) -> ControlMessage:
    kind = msg.kind if isinstance(msg.kind, ControlKind) else clean_text(msg.kind)
    payload = clean_json(msg.payload)
    return ControlMessage(kind, id=clean_text(msg.id), payload=payload, issued_at_ms=msg.issued_at_ms)


def clean_ack(ack: ControlAck) -> ControlAck:
    return replace(ack, control_id=clean_text(ack.control_id), detail=clean_text(ack.detail))
