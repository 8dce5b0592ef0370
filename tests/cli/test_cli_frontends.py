"""The console script is goldfive_tui.entry:main (goldfive_tui.cli:main once imported): the core's commands with the TUI front-ends plugged in.
The core CLI module itself never imports the TUI."""

import subprocess
import sys

from click.testing import CliRunner


def test_the_core_cli_imports_no_tui():
    code = "import goldfive.cli, sys; print(sorted(m for m in sys.modules if m in ('tui', 'goldfive_tui') or m.startswith(('tui.', 'goldfive_tui.', 'textual'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_console_script_registers_every_ui_command():
    import goldfive_tui.cli
    from goldfive.cli import FRONTENDS

    assert set(FRONTENDS) == {"demo", "run", "replay", "attach", "web", "pick_run"}
    assert goldfive_tui.cli.main is __import__("goldfive.cli").cli.main


def test_replay_opens_through_the_registered_front_end(tmp_path, monkeypatch):
    import goldfive.cli
    from goldfive import events
    from goldfive.sinks.jsonl import JSONLPersistenceSink
    from goldfive.types import Session
    import asyncio

    path = tmp_path / "run.jsonl"

    async def record():
        sink = JSONLPersistenceSink(path, mode="write")
        s = Session(run_id="r1", clock=lambda: 0)
        await sink.emit(events.run_started(s, goal_summary="g"))
        await sink.emit(events.run_completed(s, "done"))
        await sink.close()

    asyncio.run(record())
    opened = []
    monkeypatch.setitem(goldfive.cli.FRONTENDS, "replay", lambda recording: opened.append(recording) or 0)
    result = CliRunner().invoke(goldfive.cli.main, ["replay", str(path)])
    assert result.exit_code == 0, result.output
    assert len(opened) == 1 and len(opened[0].events) == 2
