"""Entry points the CLI calls to open the runs screen: ``demo --runs N`` and ``attach ADDR``."""

from __future__ import annotations

import uuid
from typing import Any

from goldfive.control import ControlChannel
from goldfive.runner import Runner

__all__ = ["DEMO_RUNS", "demo_runs", "run_attach_hub", "run_demo_hub"]

#: (goal, pace relative to --speed): different goals make different plans; the fast deck
#: reaches its publish approval early.
DEMO_RUNS: tuple[tuple[str, float], ...] = (
    ("build me a slide deck about Rust for the platform team", 4.0),
    ("build me a slide deck about Python", 1.0),
    ("write the release notes for goldfive 0.2", 0.7),
    ("build me a slide deck about SQLite internals", 1.5),
    ("summarise this week's incident reports", 1.2),
)


def demo_runs(count: int, *, speed: float = 1.0, run_ids: list[str] | None = None, record_to: str | None = None) -> Any:
    """InProcessRuns over ``count`` demo runs (the offline scripted model, no network);
    ``record_to``: each is recorded to that SQLite file (``goldfive replay`` / ``resume`` it)."""
    from goldfive.demo import make_demo_runner

    from .local import InProcessRuns

    def factory_for(goal: str, pace: float) -> Any:
        def factory(sinks: list[object], channel: ControlChannel, run_id: str) -> tuple[Runner, str]:
            return make_demo_runner(sinks=sinks, control=channel, speed=speed * pace, run_id=run_id), goal

        return factory

    ids = run_ids or [uuid.uuid4().hex for _ in range(count)]
    pairs = [(ids[n], factory_for(*DEMO_RUNS[n % len(DEMO_RUNS)])) for n in range(count)]
    if record_to is None:
        return InProcessRuns(pairs)
    from ..launch import _recording_sink

    return InProcessRuns(pairs, extra_sinks=lambda run_id: [_recording_sink(record_to)])


def _notify_cmd(command: str | None) -> Any:
    if not command:
        return None
    from goldfive.notify import NotifyCommand

    return NotifyCommand(command)


def run_demo_hub(*, runs: int, speed: float = 1.0, notify_cmd: str | None = None, db_path: str | None = None) -> int:
    """The runs screen over ``runs`` demo runs, each recorded as ``goldfive demo`` records one
    (the data directory's runs.sqlite, or ``db_path``)."""
    from goldfive.settings import default_db_path

    from ..app import GoldfiveApp
    from ..screens.runs import RunsScreen

    source = demo_runs(runs, speed=speed, record_to=db_path or default_db_path())
    GoldfiveApp(RunsScreen(source, poll_s=0.25, notify_cmd=_notify_cmd(notify_cmd))).run()
    return 0


def run_attach_hub(
    addr: str,
    *,
    token: str | None = None,
    tls_ca: str | None = None,
    tls_client_cert: str | None = None,
    tls_client_key: str | None = None,
    notify_cmd: str | None = None,
) -> int:
    from ..app import GoldfiveApp
    from ..screens.runs import RunsScreen
    from .remote import RemoteRuns

    source = RemoteRuns(addr, token=token, tls_ca=tls_ca, tls_client_cert=tls_client_cert, tls_client_key=tls_client_key)
    GoldfiveApp(RunsScreen(source, poll_s=1.0, notify_cmd=_notify_cmd(notify_cmd))).run()
    return 0


class _NoticingSource:
    """A RunSource that also tells ``--notify-cmd`` when its run needs a person: every event
    is folded, those after ``after_sequence`` (news, not history) may raise a notice."""

    def __init__(self, inner: Any, command: Any, after_sequence: int) -> None:
        from goldfive.notify import NoticeTracker

        self._inner = inner
        self._command = command
        self._after = after_sequence
        self._tracker = NoticeTracker()
        self.title = inner.title

    def __getattr__(self, name: str) -> Any:  # owns_run, on_state, ... of the wrapped source
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or name == "title":
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner, name, value)

    async def start(self) -> None:
        await self._inner.start()

    async def events(self) -> Any:
        async for item in self._inner.events():
            if hasattr(item, "WhichOneof"):
                notices = self._tracker.feed(item)
                if item.sequence > self._after:
                    for notice in notices:
                        self._command.send(notice)
            yield item

    async def send(self, msg: Any) -> Any:
        return await self._inner.send(msg)

    async def stop(self) -> None:
        await self._inner.stop()
        await self._command.aclose()


def with_notices(source: Any, notify_cmd: str | None, after_sequence: int = -1) -> Any:
    """``source`` itself, or with ``--notify-cmd`` told of what needs a person in its run."""
    command = _notify_cmd(notify_cmd)
    return source if command is None else _NoticingSource(source, command, after_sequence)
