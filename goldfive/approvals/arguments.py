"""Edited arguments checked against a tool's parameters (a JSON schema) before anything runs."""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _type_ok(value: Any, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else list(expected)
    for name in names:
        kinds = _TYPES.get(name)
        if kinds is None:
            return True  # a type this checker does not know: the tool judges it
        # bool is an int in Python, never in JSON.
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, kinds):
            return True
    return False


def _type_name(value: Any) -> str:
    for name, kinds in _TYPES.items():
        if isinstance(value, kinds) and not (isinstance(value, bool) and name in ("integer", "number")):
            return name
    return type(value).__name__


def arguments_problem(parameters: dict[str, Any] | None, arguments: Any) -> str:
    """Why ``arguments`` cannot be the call's arguments ("" when they can).

    Checks what a person can get wrong when editing: an unknown name (when the schema allows
    no others), a missing required one, a value of the wrong JSON type. With no schema only
    "is it an object" is checked."""
    if not isinstance(arguments, dict):
        return f"the arguments must be a JSON object, got {_type_name(arguments)}"
    for key in arguments:
        if not isinstance(key, str):
            return f"argument name {key!r} is not text"
    if not parameters:
        return ""
    props: dict[str, Any] = parameters.get("properties") or {}
    closed = parameters.get("additionalProperties") is False
    for name in sorted(arguments):
        spec = props.get(name)
        if spec is None:
            if closed:
                known = ", ".join(sorted(props)) or "none"
                return f"unknown argument {name!r} (the tool takes: {known})"
            continue
        expected = spec.get("type") if isinstance(spec, dict) else None
        if expected and not _type_ok(arguments[name], expected):
            return f"argument {name!r} must be {expected if isinstance(expected, str) else ' or '.join(expected)}, got {_type_name(arguments[name])}"
    for name in parameters.get("required") or ():
        if name not in arguments:
            return f"argument {name!r} is required"
    return ""
