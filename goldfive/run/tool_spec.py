"""A tool handed to an agent (``ReportingToolSpec``) and the check of its arguments.

A leaf: it imports nothing of the run, so the run's parts (``goldfive.run.tools``, the user
tools) and the protocol they see the run by (``goldfive.run.parts``) can name it without an
import circle. ``goldfive.run.tools`` and ``goldfive`` still export it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from goldfive.errors import GoldfiveError

__all__ = ["Handler", "ReportingToolSpec", "validate_args"]

Handler = Callable[..., Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ReportingToolSpec:
    name: str
    description: str
    #: JSON schema of the arguments (type "object").
    parameters: dict[str, Any]
    handler: Handler = field(repr=False, compare=False)

    async def __call__(self, **kwargs: Any) -> dict[str, Any]:
        problem = validate_args(self.parameters, kwargs)
        if problem:
            return {"ok": False, "error": f"{self.name}: {problem}"}
        return await self.checked_call(**kwargs)

    async def checked_call(self, **kwargs: Any) -> dict[str, Any]:
        """``__call__`` for arguments already checked against this spec's ``parameters``: by a
        wrapper spec with the same schema (``replace(spec, handler=...)``) whose handler calls
        on here, so a call is checked once, not once per layer."""
        try:
            return await self.handler(**kwargs)
        except asyncio.CancelledError:
            raise
        except GoldfiveError as exc:
            return {"ok": False, "error": f"{self.name}: {exc}"}

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list, tuple),
}


def validate_args(schema: dict[str, Any], args: dict[str, Any]) -> str:
    """A short description of what is wrong with ``args``, or "" when they fit the schema."""
    props: dict[str, Any] = schema.get("properties", {})
    # Plain loops first (every tool call): the lists are made only for the message.
    required: list[str] = schema.get("required", [])
    for k in required:
        if k not in args:
            return f"missing required argument(s): {', '.join(r for r in required if r not in args)}"
    if not schema.get("additionalProperties", True):
        for k in args:
            if k not in props:
                return f"unknown argument(s): {', '.join(sorted(a for a in args if a not in props))}"
    for key, value in args.items():
        expected = props.get(key, {}).get("type")
        if expected is None or value is None:
            continue
        types = _JSON_TYPES.get(expected, (object,))
        if isinstance(value, bool) and expected in ("integer", "number"):
            return f"argument {key!r} must be {expected}, got boolean"
        if not isinstance(value, types):
            return f"argument {key!r} must be {expected}, got {type(value).__name__}"
    return ""
