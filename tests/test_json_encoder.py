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
from goldfive import clean
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
    made: list[str] = []
    real = json.encoder.c_make_encoder
    assert real is not None

    def counting(where: str) -> Any:
        def make(*args: Any) -> Any:
            made.append(where)
            return real(*args)

        return make

    expected = [json.dumps({"i": i}) for i in range(5)]
    monkeypatch.setattr(clean, "_c_make_encoder", counting("json_encoder"))
    monkeypatch.setattr(json.encoder, "c_make_encoder", counting("JSONEncoder.encode"))  # what a dump per call would use
    encode = json_encoder(ensure_ascii=False, sort_keys=True, default=str)
    made_at_start = len(made)  # the build, and the check against the sample
    for i in range(5):
        assert encode({"i": i}) == expected[i]
    assert made[made_at_start:] == [], made
    assert made.count("json_encoder") == 1, made


def test_json_encoder_falls_back_to_the_public_encoder_when_the_c_encoder_takes_other_arguments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def other_signature(markers: Any, default: Any, encoder: Any) -> Any:  # as if a Python changed it
        raise AssertionError("not reached: called with 9 arguments")

    monkeypatch.setattr(clean, "_c_make_encoder", other_signature)
    encode = json_encoder(ensure_ascii=False, sort_keys=True, default=str)
    for value in VALUES:
        try:
            expected = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        except TypeError:  # (keys of mixed types cannot be sorted: the same error)
            with pytest.raises(TypeError):
                encode(value)
        else:
            assert encode(value) == expected


def test_json_encoder_falls_back_when_the_c_encoder_writes_other_text(monkeypatch: pytest.MonkeyPatch) -> None:
    real = json.encoder.c_make_encoder
    assert real is not None

    def spaced(*args: Any) -> Any:
        inner = real(*args)
        return lambda value, level: [*inner(value, level), " "]

    monkeypatch.setattr(clean, "_c_make_encoder", spaced)
    encode = json_encoder(sort_keys=True)
    assert encode({"b": 1, "a": [2]}) == '{"a": [2], "b": 1}'


def test_the_desk_key_the_ledger_json_and_json_text_are_byte_identical_to_json_dumps() -> None:
    for value in VALUES[:5]:
        args = value if isinstance(value, dict) else {"v": value}
        args = {str(k): v for k, v in args.items()}
        assert call_key("t1", "deploy", args) == json.dumps(["t1", "deploy", args], sort_keys=True, default=str)
        assert json_text(args) == json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
        if "obj" not in args and "when" not in args:
            assert _compact(args) == json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
