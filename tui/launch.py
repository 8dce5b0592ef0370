"""Entry points the CLI calls to open the TUI on a run."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any, Callable, TextIO

from goldfive.control import ControlChannel
from goldfive.runner import Runner
from goldfive.settings import default_db_path

EXIT_INTERRUPTED = 130  # the shell's convention for Ctrl-C


def _recording_sink(db_path: str | None) -> Any:
    from goldfive.sinks.sqlite import SQLitePersistenceSink

    path = db_path or default_db_path()
    if path != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return SQLitePersistenceSink(path, durability="normal")  # a killed run can be resumed (goldfive resume)


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def run_local_tui(
    factory: Callable[[list[object], ControlChannel], tuple[Runner, str]],
    *,
    db_path: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run ``factory``'s Runner in-process under the TUI, recording it to SQLite.

    Returns 0 when the run completed, 1 when it aborted or failed (as ``run --headless``).
    If the person chose "keep running" on quit, the process follows the run headless (one
    line per event on ``out``) until it ends. Agent tracebacks and the replay command go to
    ``err`` once the terminal is back.
    """
    from .app import GoldfiveApp
    from .local_source import LocalRunSource
    from .run.screen import RunScreen

    out, err = out or sys.stdout, err or sys.stderr
    recorder = _recording_sink(db_path)
    from goldfive.run.defaults import run_defaults

    source = LocalRunSource(factory, extra_sinks=[recorder, *run_defaults().sinks()])
    screen = RunScreen(source, clock=_wall_ms)
    try:
        asyncio.run(_run(GoldfiveApp(screen), screen, source, out, err))
    except KeyboardInterrupt:  # Ctrl+C while following headless: the run was cancelled
        print("goldfive: interrupted: the run was cancelled", file=err)
        _report(source, err)
        return EXIT_INTERRUPTED
    return _report(source, err)


async def _run(app: Any, screen: Any, source: Any, out: TextIO, err: TextIO) -> None:
    from goldfive.cli.output import field

    from .screens.dialogs import DETACH, DETACH_REJECT, DETACHED_APPROVAL_S

    try:
        chosen = await app.run_async()
        if chosen in (DETACH, DETACH_REJECT):
            where = source.recorded_at()
            recorded = f"; it is recorded to {where}" if where else ""
            print(field(f"goldfive: the TUI closed; run {source.run_id} goes on headless until it ends{recorded}. Ctrl+C cancels it."), file=err, flush=True)
            reject_after = DETACHED_APPROVAL_S if chosen == DETACH_REJECT else None
            fate = f"it is rejected in {DETACHED_APPROVAL_S / 60:g} minutes" if reject_after else "it waits until you press Ctrl+C"
            for view in screen.feed.state.approvals.values():  # nobody can answer these now
                print(f"goldfive: {field(view.tool_name or view.target_id)} waits for approval and nobody can answer it here: {fate}", file=err, flush=True)
            await source.follow(out, reject_after=reject_after)
    finally:
        await source.stop()  # the app left the run alive only when it was kept running


def _report(source: Any, err: TextIO) -> int:
    """After the terminal is back: the agent's tracebacks, how it ended, how to replay it."""
    from goldfive.cli.output import field
    from goldfive.terminal_text import terminal_safe

    for task_id, trace in source.tracebacks.items():  # an exception's message is the agent's text
        print(f"goldfive: the agent raised on task {field(task_id)}:\n{terminal_safe(trace.rstrip(), multiline=True)}", file=err)
    if source.error is not None:
        print(f"goldfive: run aborted: {type(source.error).__name__}: {field(source.error)}", file=err)
    from goldfive.cli.local import recorded_line, recording_failed_line

    if source.runner.recording_failures:
        print(f"goldfive: {recording_failed_line(source.runner)}", file=err)
    if source.runner.session is not None:
        print(recorded_line(source.recorder.path, source.run_id), file=err)
    return 0 if source.succeeded and not source.runner.recording_failures else 1


def run_demo_tui(*, speed: float = 1.0, base_url: str | None = None, model: str | None = None, db_path: str | None = None) -> int:
    from goldfive.demo import DEMO_GOAL, make_demo_runner

    def factory(sinks: list[object], channel: ControlChannel) -> tuple[Runner, str]:
        runner = make_demo_runner(sinks=sinks, control=channel, speed=speed, base_url=base_url, model=model)
        return runner, DEMO_GOAL

    return run_local_tui(factory, db_path=db_path)
