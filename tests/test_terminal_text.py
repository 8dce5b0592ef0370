"""Text a runner sends never reaches the operator's terminal as escapes: the one sanitizer, the
event lines (``ctl tail``, ``run --headless``), and ``ctl runs / status / waiting / tail / ledger``
against a real hub whose connected run writes OSC 52, OSC 0, CSI 2J and C1 CSI everywhere."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldfive import events
from goldfive.cli import main
from goldfive.control import AckResult, ControlAck
from goldfive.event_format import format_event
from goldfive.terminal_text import terminal_safe
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Plan, Session, Task
from tests.escapes import ESCAPES, HostileHub, forbidden_in, laden

# -- the sanitizer ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_each_escape_is_removed_whole(name: str) -> None:
    out = terminal_safe(f"before {ESCAPES[name]} after")
    assert forbidden_in(out) == [] and out.startswith("before ")
    # What the sequence carried does not survive either (a title, a clipboard payload).
    for payload in ("PWNED", "ZWNob", "C1 TITLE", "544e", "2J"):
        assert payload not in out


def test_an_unterminated_control_string_takes_the_rest_of_its_field_only() -> None:
    assert terminal_safe("goal \x1b]0;title without end") == "goal "
    assert terminal_safe("a\x1b") == "a" and terminal_safe("a\x9b") == "a"


def test_one_line_fields_lose_their_line_breaks_and_blocks_keep_them() -> None:
    text = "row one\nr2\tcol\r\nr3\rX"
    assert terminal_safe(text) == "row one r2 col r3X"
    assert terminal_safe(text, multiline=True) == "row one\nr2\tcol\nr3X"


def test_printable_text_is_left_as_it_is() -> None:
    text = "Publish the deck: 8 slides, «résumé» 漢字 [bold]x[/] \\x1b"
    assert terminal_safe(text) is text


def test_event_lines_hold_no_escapes() -> None:
    s = Session(run_id="r\x1b]0;id\x07")
    bad = laden("x")
    plan = Plan(tasks=[Task("t1", bad)], id="p")
    drift = DriftEvent(kind=DriftKind.OFF_TOPIC, severity=DriftSeverity.WARNING, detail=bad, task_id="t1")
    evs = [
        events.run_started(s, goal_summary=bad),
        events.plan_submitted(s, plan),
        events.task_progress(s, "t1" + ESCAPES["c1csi"], detail=bad),
        events.drift_detected(s, drift),
        events.approval_requested(s, target_id="a\x9b1", kind="tool", prompt=bad, tool_name=bad, args={"path": bad}),
        events.agent_step(s, task_id="t1", step="tool_call", framework="f", tool_name=bad, args={"q": bad}, text=bad),
        events.task_failed(s, "t1", bad),
        events.run_aborted(s, bad),
    ]
    for ev in evs:
        line = format_event(ev)
        assert forbidden_in(line) == [] and "\n" not in line, line


def test_headless_run_output_holds_no_escapes() -> None:
    from goldfive.cli.local import _PrintSink

    out = io.StringIO()
    sink = _PrintSink(out)
    s = Session(run_id="r1")
    asyncio.run(sink.emit(events.run_started(s, goal_summary=laden("goal"))))
    asyncio.run(sink.emit(events.task_progress(s, "t1", detail=laden("progress"))))
    assert forbidden_in(out.getvalue().replace("\n", "")) == [] and out.getvalue().count("\n") == 2


def test_log_lines_on_stderr_hold_no_escapes() -> None:
    from goldfive.cli.output import SafeFormatter

    record = logging.LogRecord("goldfive.hub", logging.WARNING, __file__, 1, "run %s left: %s", ("r\x1b]0;t\x07", laden("why")), None)
    assert forbidden_in(SafeFormatter().format(record)) == []


# -- ctl against a real hub ---------------------------------------------------------------------


@pytest.fixture
def evil_hub(tmp_path: Path) -> Iterator[HostileHub]:
    hub = HostileHub(tmp_path / "hub.sqlite", laden)
    yield hub
    hub.stop()


@pytest.mark.parametrize(
    "args",
    [("runs",), ("status", "open-run"), ("waiting",), ("tail", "done-run"), ("runs", "--json"), ("waiting", "--json")],
    ids=lambda a: " ".join(a),
)
def test_ctl_prints_a_hostile_runs_text_without_its_escapes(evil_hub: HostileHub, args: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, ["ctl", evil_hub.server.address, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert any(w in result.output for w in ("goal", "text", "arg"))  # the text is there, its escapes are not
    assert forbidden_in(result.output) == []
    if not args[-1] == "--json":  # one row per run or item: a newline in a field starts no row
        rows = result.stdout.splitlines()  # ctl runs: its header line is on stderr
        assert len(rows) == {"runs": 2, "status": 6, "waiting": 1, "tail": 7}[args[0]], rows  # status: with its "needs you" line


def test_an_acks_detail_from_the_run_is_printed_without_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    from goldfive.cli.ctl.controls import _print_ack
    from goldfive.cli.ctl.group import _Opts

    ack = ControlAck(control_id="c1", result=AckResult.SUCCESS, detail=laden("detail"))
    _print_ack(_Opts("a:1", None, None, False), "STEER", ack)
    assert forbidden_in(capsys.readouterr().out.rstrip("\n")) == []
