"""Reading one control payload dict into a payload class's fields.

Each class declares its fields as ``(key, convert)`` pairs; ``read_fields`` looks each key up
once and converts the values that are present (JSON ``null`` is absent: the field keeps its
default). A value that does not fit is refused with the kind and the field named
(``STEER payload.note must be text, got a number``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from goldfive.control import ControlKind, kind_name
from goldfive.errors import ControlPayloadError

__all__ = ["Convert", "as_flag", "as_object", "as_seconds", "as_text", "read_fields", "refuse", "required", "type_name"]

#: (the kind, the key, the value present in the payload) -> the field's value.
Convert = Callable[[ControlKind | str, str, Any], Any]


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def refuse(kind: ControlKind | str, key: str, want: str, value: Any) -> ControlPayloadError:
    return ControlPayloadError(f"{kind_name(kind)} payload.{key} must be {want}, got {type_name(value)}", key)


def as_text(kind: ControlKind | str, key: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    raise refuse(kind, key, "text", value)


def as_flag(kind: ControlKind | str, key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise refuse(kind, key, "true or false", value)


def as_seconds(kind: ControlKind | str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value <= 0:
        raise refuse(kind, key, "a positive number of seconds", value)
    return float(value)


def as_object(want: str) -> Convert:
    """A JSON object, kept as a read-only copy."""

    def convert(kind: ControlKind | str, key: str, value: Any) -> Mapping[str, Any]:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise refuse(kind, key, want, value)
        return MappingProxyType(dict(value))

    return convert


def required(kind: ControlKind | str, key: str, value: str) -> None:
    """A text field a control of this kind cannot do without."""
    if not value.strip():
        raise ControlPayloadError(f"{kind_name(kind)} needs payload.{key}", key)


def read_fields(
    kind: ControlKind | str, payload: Mapping[str, Any], fields: tuple[tuple[str, Convert], ...], needs: tuple[str, ...]
) -> dict[str, Any]:
    """The fields present in ``payload``, converted; ``needs`` are the required text fields."""
    out: dict[str, Any] = {}
    get = payload.get
    for key, convert in fields:
        value = get(key)
        if value is not None:
            # Text where text is wanted (most fields of most controls) needs no conversion call.
            out[key] = value if convert is as_text and value.__class__ is str else convert(kind, key, value)
    for key in needs:
        required(kind, key, out.get(key, ""))
    return out
