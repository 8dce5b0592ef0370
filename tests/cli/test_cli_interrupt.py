"""Ctrl-C on a headless run: exit 130, one line, and (for ``run``) where the partial run is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _as_from_a_terminal() -> None:
    """In the child before exec: SIGINT unblocked and at its default, as a shell starts a
    command. A test worker may have it blocked or ignored (both are inherited), and then the
    child never sees the Ctrl-C this file sends (seen under the full suite on two workers)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_after_first_task(args: list[str], data_dir: Path) -> tuple[int, str]:
    env = dict(os.environ, GOLDFIVE_DATA_DIR=str(data_dir))
    proc = subprocess.Popen(
        [sys.executable, "-m", "goldfive.cli", *args],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_terminal,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # the run is under way once a task has started
        if "task_started" in line:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery to a child is POSIX-only")
def test_ctrl_c_on_run_headless_exits_130_and_says_where_the_partial_run_is(tmp_path: Path) -> None:
    code, err = interrupt_after_first_task(
        ["run", "examples.hello_agent:agent", "--goal", "g", "--plan", "examples/hello_plan.json", "--headless"], tmp_path
    )
    assert code == 130, err
    assert "Traceback" not in err and "Aborted!" not in err
    assert "goldfive: interrupted" in err
    assert f"recorded to {tmp_path / 'runs.sqlite'}" in err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery to a child is POSIX-only")
def test_ctrl_c_on_demo_headless_exits_130_with_one_line(tmp_path: Path) -> None:
    code, err = interrupt_after_first_task(["demo", "--headless"], tmp_path)
    assert code == 130, err
    assert [line for line in err.splitlines() if line.strip()] == ["goldfive: interrupted"]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery to a child is POSIX-only")
def test_ctrl_c_while_the_console_script_is_still_importing_prints_one_line(tmp_path: Path) -> None:
    """The console script's entry (goldfive_tui.entry) imports the commands inside main: a
    Ctrl-C there, in the first half second, is one line and 130, not a traceback."""
    env = dict(os.environ, GOLDFIVE_DATA_DIR=str(tmp_path))
    code = (  # "go" is printed from inside main's import of the commands: the signal lands there
        "import sys\n"
        "class Go:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'goldfive.cli':\n"
        "            print('go', flush=True); sys.meta_path.remove(self); import time; time.sleep(5)\n"
        "from goldfive_tui.entry import main\n"
        "sys.meta_path.insert(0, Go()); sys.argv = ['goldfive', 'runs']; main()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_as_from_a_terminal
    )
    assert proc.stdout is not None and proc.stdout.readline() == "go\n"
    proc.send_signal(signal.SIGINT)  # the commands take most of a second to import
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert [line for line in err.splitlines() if line.strip()] == ["goldfive: interrupted"]


def test_a_ctrl_c_no_command_handles_is_one_line_and_130() -> None:
    import click
    from click.testing import CliRunner

    from goldfive.cli import main

    @main.command("_interrupt_for_test", hidden=True)
    def interrupt() -> None:
        raise KeyboardInterrupt

    try:
        result = CliRunner().invoke(main, ["_interrupt_for_test"])
    finally:
        main.commands.pop("_interrupt_for_test", None)
    assert result.exit_code == 130
    assert result.output.strip() == "goldfive: interrupted" and "Aborted" not in result.output
    assert isinstance(main, click.Group)
