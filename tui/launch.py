"""Entry points the CLI calls to open the TUI on a run."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

from goldfive.control import ControlChannel
from goldfive.runner import Runner
from goldfive.settings import default_db_path


def _recording_sink(db_path: str | None) -> Any:
    from goldfive.sinks.sqlite import SQLitePersistenceSink

    path = db_path or default_db_path()
    if path != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return SQLitePersistenceSink(path)


def run_local_tui(factory: Callable[[list[object], ControlChannel], tuple[Runner, str]], *, db_path: str | None = None) -> int:
    """Run ``factory``'s Runner in-process under the TUI, recording it to SQLite."""
    from tui.app import GoldfiveApp
    from tui.local_source import LocalRunSource

    import time

    recorder = _recording_sink(db_path)
    source = LocalRunSource(factory, extra_sinks=[recorder])
    GoldfiveApp(source, clock=lambda: time.time_ns() // 1_000_000).run()
    session = source.runner.session
    if session is not None:  # after the app gave the terminal back: say how to replay it
        from goldfive.cli.local import recorded_line

        print(recorded_line(recorder.path, session.run_id), file=sys.stderr)
    return 0


def run_demo_tui(*, speed: float = 1.0, base_url: str | None = None, model: str | None = None, db_path: str | None = None) -> int:
    from goldfive.demo import DEMO_GOAL, make_demo_runner

    def factory(sinks: list[object], channel: ControlChannel) -> tuple[Runner, str]:
        runner = make_demo_runner(sinks=sinks, control=channel, speed=speed, base_url=base_url, model=model)
        return runner, DEMO_GOAL

    return run_local_tui(factory, db_path=db_path)
