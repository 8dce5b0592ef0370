"""Reading one control payload dict for one kind: each read names the kind and the field when
the value does not fit (``STEER payload.note must be text, got a number``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from goldfive.errors import ControlPayloadError

__all__ = ["PayloadReader", "type_name"]


class PayloadReader:
    """Reads one payload dict for one kind; every refusal names the kind and the field."""

    def __init__(self, kind: str, payload: Mapping[str, Any]) -> None:
        self.kind = kind
        self.payload = payload

    def _refuse(self, key: str, want: str, value: Any) -> ControlPayloadError:
        return ControlPayloadError(f"{self.kind} payload.{key} must be {want}, got {type_name(value)}", key)

    def text(self, key: str, default: str = "") -> str:
        value = self.payload.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self._refuse(key, "text", value)
        return value

    def required_text(self, key: str) -> str:
        value = self.text(key)
        if not value.strip():
            raise ControlPayloadError(f"{self.kind} needs payload.{key}", key)
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.payload.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._refuse(key, "true or false", value)
        return value

    def seconds(self, key: str) -> float | None:
        value = self.payload.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value <= 0:
            raise self._refuse(key, "a positive number of seconds", value)
        return float(value)

    def mapping(self, key: str, want: str) -> Mapping[str, Any] | None:
        value = self.payload.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise self._refuse(key, want, value)
        return MappingProxyType(dict(value))


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
