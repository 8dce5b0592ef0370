"""``goldfive.clean.json_encoder``: ``json.dumps`` with its C encoder made once. Its text is
``json.dumps``'s byte for byte (the desk's call keys and the ledger's JSON are compared and
hashed), and it fails as ``json.dumps`` fails."""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

import pytest

from goldfive.approvals.desk import call_key
from goldfive.approvals.ledger import _compact
from goldfive.clean import json_encoder, json_text

class _Thing:
    def __str__(self) -> str:
        return "a thing"


VALUES: list[Any] = [
    {},
    {"b": 1, "a": [1, 2.5, -0.0, 1e300, None, True, False], "c": {"z": "é", "y": "日本", "x": "\u2028"}},
    {"nan": math.nan, "inf": math.inf, "-inf": -math.inf},
    {1: "int key", "1.5": 2, "k": (1, 2)},
    {"when": datetime.date(2026, 12, 2), "obj": _Thing()},
    ["a", "\"quoted\"\n\\", "\x00\x1f", "emoji \U0001f600"],
    "plain",
    "ünïcode",
    12,
    1.25,
    None,
    [[[[["deep"]]]]],
]

OPTIONS: list[dict[str, Any]] = [
    {},
    {"ensure_ascii": False, "sort_keys": True, "default": str},
    {"ensure_ascii": False, "default": str},
    {"sort_keys": True, "default": str},
    {"ensure_ascii": False, "sort_keys": True, "separators": (",", ":")},
    {"ensure_ascii": False, "allow_nan": False},
]


def _outcome(dump: Any, value: Any) -> tuple[str, str]:
    try:
        return ("text", dump(value))
    except (TypeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(sorted(o)) or "defaults")
def test_json_encoder_writes_what_json_dumps_writes_byte_for_byte_and_fails_as_it_fails(options: dict[str, Any]) -> None:
    encode = json_encoder(**options)
    for value in VALUES:
        assert _outcome(encode, value) == _outcome(lambda v: json.dumps(v, **options), value), value


def test_a_value_that_holds_itself_raises_json_dumps_circular_reference_error() -> None:
    looped: dict[str, Any] = {"a": 1}
    looped["self"] = looped
    listed: list[Any] = [1]
    listed.append(listed)
    for value in (looped, listed):
        with pytest.raises(ValueError, match="Circular reference detected"):
            json_encoder(sort_keys=True, default=str)(value)
    assert json_encoder()({"after": "the error"}) == '{"after": "the error"}'  # nothing left behind


def test_json_encoder_builds_its_c_encoder_once_not_per_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    real = json.encoder.c_make_encoder
    assert real is not None

    def counting(*args: Any) -> Any:
        made.append(args)
        return real(*args)

    monkeypatch.setattr(json.encoder, "c_make_encoder", counting)
    encode = json_encoder(ensure_ascii=False, sort_keys=True, default=str)
    for i in range(5):
        encode({"i": i})
    assert len(made) <= 1, len(made)


def test_the_desk_key_the_ledger_json_and_json_text_are_byte_identical_to_json_dumps() -> None:
    for value in VALUES[:5]:
        args = value if isinstance(value, dict) else {"v": value}
        args = {str(k): v for k, v in args.items()}
        assert call_key("t1", "deploy", args) == json.dumps(["t1", "deploy", args], sort_keys=True, default=str)
        assert json_text(args) == json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
        if "obj" not in args and "when" not in args:
            assert _compact(args) == json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
