"""The detectors on their own: thresholds, multiples, what resets them, their evidence."""

from __future__ import annotations

import json

from goldfive.types import DriftKind
from goldfive.watchdog import Step, TaskWatch, WatchdogConfig
from goldfive.watchdog.detectors import DISTINCT

CFG = WatchdogConfig(repeat_calls=5, ping_pong_cycles=3, stall_s=120, stall_model_calls=3, repeat_outputs=3, timeout_factor=3)


def call(ms: int, name: str, **args: object) -> Step:
    return Step(ms, ms, "tool_call", name, f"c{ms}", json.dumps(args, sort_keys=True))


def test_the_same_call_fires_at_the_threshold_and_each_multiple_with_its_calls_as_evidence() -> None:
    w = TaskWatch("deploy", CFG, started_ms=0)
    fired = [(i, f) for i in range(1, 16) for f in w.tool_call(call(i * 1000, "deploy", service="api"))]
    assert [i for i, _ in fired] == [5, 10, 15]
    first = fired[0][1]
    assert first.kind == DriftKind.LOOPING_TOOL_CALL and first.detector == "repeat_calls"
    assert first.detail == "looks stuck: deploy called 5 times with the same arguments"
    assert [(e.at_ms, e.tool_name, e.args_json) for e in first.evidence] == [
        (i * 1000, "deploy", '{"service": "api"}') for i in range(1, 6)
    ]


def test_different_arguments_are_different_calls() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    assert not [f for i in range(50) for f in w.tool_call(call(i, "read_file", path=f"src/{i}.py"))]


def test_a_new_progress_note_starts_the_count_again_and_the_same_note_does_not() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    for i in range(4):
        assert w.tool_call(call(i, "deploy", v=1)) == []
    w.progress(Step(10, 10, "progress", text="retrying with a backoff"), -1)
    for i in range(4):
        assert w.tool_call(call(20 + i, "deploy", v=1)) == []
    w.progress(Step(30, 30, "progress", text="retrying with a backoff"), -1)  # said before: not progress
    assert w.tool_call(call(40, "deploy", v=1))[0].detail.startswith("looks stuck: deploy called 5 times")


def test_a_ping_pong_of_two_calls_is_found_after_the_cycles() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    found = []
    for i in range(6):
        name, args = ("get_status", {"id": 7}) if i % 2 == 0 else ("restart", {"id": 7})
        found += w.tool_call(call(i * 1000, name, **args))
    [pong] = found
    assert pong.detector == "ping_pong" and pong.kind == DriftKind.LOOPING_TOOL_CALL
    assert "get_status and restart called by turns 3 times each" in pong.detail
    assert [e.tool_name for e in pong.evidence] == ["get_status", "restart"] * 3


def test_a_third_call_in_between_is_not_a_ping_pong() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    names = ["a", "b", "a", "c", "a", "b", "a", "b", "c"]
    assert not [f for i, n in enumerate(names) for f in w.tool_call(call(i, n)) if f.detector == "ping_pong"]


def test_model_calls_with_no_tool_call_for_the_stall_time_are_a_stall() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    assert w.model_output(Step(60_000, 1, "model_output", text="thinking about it")) == []
    assert w.model_output(Step(100_000, 2, "model_output", text="still thinking")) == []
    [stall] = w.model_output(Step(125_000, 3, "model_output", text="hmm"))
    assert stall.kind == DriftKind.UNCERTAIN_PROGRESS
    assert stall.detail.startswith("looks stalled: 3 model calls in 125s since its start")
    assert [e.at_ms for e in stall.evidence] == [60_000, 100_000, 125_000]
    assert w.model_output(Step(130_000, 4, "model_output", text="more")) == []  # next: at 240 s
    assert w.model_output(Step(241_000, 5, "model_output", text="and more"))[0].detector == "stall"


def test_one_slow_answer_is_not_a_stall_and_a_tool_call_resets_the_clock() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    assert w.model_output(Step(500_000, 1, "model_output", text="done thinking")) == []
    w.tool_call(call(510_000, "search", q="x"))
    for i, at in enumerate((520_000, 560_000, 600_000)):
        assert w.model_output(Step(at, 10 + i, "model_output", text=f"step {i}")) == []


def test_the_same_answer_repeated_is_found_and_words_are_compared_loosely() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    texts = ["I will check the logs.", "i will  check the LOGS.", "I will check the logs."]
    found = [f for i, t in enumerate(texts) for f in w.model_output(Step(i, i, "model_output", text=t))]
    assert [f.detector for f in found] == ["repeat_outputs"] and found[0].kind == DriftKind.LOOPING_REASONING


def test_a_timeout_is_due_at_the_factor_of_the_prediction_and_again_after() -> None:
    w = TaskWatch("t", CFG, started_ms=1000, predicted_ms=2000)
    assert w.next_timeout_ms() == 7000
    f = w.timed_out(7100)
    assert f.kind == DriftKind.TASK_TIMEOUT and "3.0x its predicted 2s" in f.detail
    assert w.next_timeout_ms() == 13000
    assert TaskWatch("t", CFG, started_ms=0).next_timeout_ms() is None  # no prediction, no timeout


def test_thresholds_come_from_the_environment_in_one_place() -> None:
    import pytest

    from goldfive.errors import GoldfiveError
    from goldfive.settings import watchdog_config

    cfg = watchdog_config({"GOLDFIVE_WATCHDOG_REPEAT_CALLS": "8", "GOLDFIVE_WATCHDOG_STALL_S": "30"})
    assert (cfg.enabled, cfg.repeat_calls, cfg.stall_s, cfg.ping_pong_cycles) == (True, 8, 30.0, 3)
    assert not watchdog_config({"GOLDFIVE_WATCHDOG": "off"}).enabled
    with pytest.raises(GoldfiveError, match="GOLDFIVE_WATCHDOG_STALL_S='soon' is not a number"):
        watchdog_config({"GOLDFIVE_WATCHDOG_STALL_S": "soon"})
    with pytest.raises(GoldfiveError, match="repeat_calls must be at least 1"):
        watchdog_config({"GOLDFIVE_WATCHDOG_REPEAT_CALLS": "0"})


def test_a_long_task_of_different_calls_and_answers_holds_a_bounded_number_of_them() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    for i in range(100_000):
        assert w.tool_call(Step(i, i, "tool_call", "read_file", f"c{i}", f'{{"path": "src/{i}.py"}}')) == []
        w.model_output(Step(i, i, "model_output", text=f"reading file {i}"))
    assert len(w._same) <= DISTINCT and len(w._outputs) <= DISTINCT


def test_a_call_repeated_all_task_long_keeps_only_the_evidence_it_shows() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    for i in range(1, 100_000):
        w.tool_call(call(i, "get_status"))
    [held] = w._same.values()
    assert len(held) == CFG.max_evidence
    [last] = w.tool_call(call(100_000, "get_status"))
    assert last.detail == "looks stuck: get_status called 100000 times with the same arguments"
    assert [e.at_ms for e in last.evidence] == list(range(100_000 - CFG.max_evidence + 1, 100_001))


def test_a_call_repeated_among_many_others_is_still_counted_while_they_are_fewer_than_the_bound() -> None:
    w = TaskWatch("t", CFG, started_ms=0)
    found = []
    for rep in range(5):
        found += w.tool_call(call(rep * DISTINCT, "deploy", v=1))
        for i in range(1, DISTINCT - 1):  # every call in between a different one
            found += w.tool_call(call(rep * DISTINCT + i, "read_file", path=f"{rep}/{i}.py"))
    assert [f.detail for f in found] == ["looks stuck: deploy called 5 times with the same arguments"]
