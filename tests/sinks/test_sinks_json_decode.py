"""The fast JSON decoder gives json_format.ParseDict's result on every event kind, and its
errors (through the fallback) on input it does not recognise."""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.protobuf import json_format

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks import _json_decode
from goldfive.sinks._json import message_to_dict
from goldfive.sinks._json_decode import parse_dict
from goldfive.types import Session
from tests.sinks.test_sinks_json import _every_kind


def reference(obj: dict[str, Any]) -> Event:
    return json_format.ParseDict(obj, Event(), ignore_unknown_fields=True)


def same(a: Event, b: Event) -> bool:
    # NaN != NaN, so compare the wire bytes (deterministic) instead of the messages.
    return a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


@pytest.mark.parametrize("clock_ms", [0, 1_700_000_000_123, 1_700_000_000_000, 1_767_225_600_007])
def test_decoder_matches_parse_dict_on_every_event_kind(clock_ms: int) -> None:
    for ev in _every_kind(Session(run_id="r1", clock=lambda: clock_ms)):
        obj = message_to_dict(ev)
        decoded = parse_dict(obj, Event)
        assert same(decoded, reference(obj)), ev.WhichOneof("payload")
        assert same(decoded, ev)


def test_the_fast_path_handles_every_event_kind_without_falling_back(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    original = json_format.ParseDict
    monkeypatch.setattr(_json_decode.json_format, "ParseDict", lambda *a, **k: calls.append(a) or original(*a, **k))
    kinds = _every_kind(Session(run_id="r1", clock=lambda: 1_700_000_000_123))
    finite = [ev for ev in kinds if not (ev.HasField("task_progress") and not math.isfinite(ev.task_progress.fraction))]
    for ev in finite:
        parse_dict(message_to_dict(ev), Event)
    assert calls == []


ODD_INPUT: list[dict[str, Any]] = [
    {"runId": "r", "run_id": "s"},  # one field under both names
    {"runStarted": {}, "runCompleted": {}},  # two members of one oneof
    {"sequence": "12x"},
    {"sequence": 1.5},
    {"sequence": "-3"},
    {"runId": 5},
    {"emittedAt": "2026-02-30T00:00:00Z"},
    {"emittedAt": "not a time"},
    {"emittedAt": "2026-01-01T01:02:03.5+01:00"},  # offsets go through json_format
    {"taskProgress": {"fraction": "lots"}},
    {"taskProgress": {"fraction": "NaN"}},
    {"taskStarted": "a"},
    {"sequence": "42", "unknownField": {"x": 1}},
    {"event_id": "e", "run_id": "r"},  # proto names are accepted too
    {"sequence": None},
]


@pytest.mark.parametrize("obj", ODD_INPUT)
def test_odd_input_gives_parse_dicts_result_or_its_error(obj: dict[str, Any]) -> None:
    try:
        expected = reference(obj)
    except json_format.ParseError as exc:
        with pytest.raises(json_format.ParseError) as got:
            parse_dict(obj, Event)
        assert str(got.value) == str(exc)
    else:
        assert same(parse_dict(obj, Event), expected)


def test_some_odd_input_is_an_error() -> None:
    errors = 0
    for obj in ODD_INPUT:
        try:
            parse_dict(obj, Event)
        except json_format.ParseError:
            errors += 1
    assert errors >= 5
