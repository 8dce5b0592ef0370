"""Helpers for testing code that uses goldfive (and goldfive's own tests): a free port, waiting
for a condition, a hub serving on an event loop of its own, ``goldfive ctl`` in process.

Nothing here is imported by goldfive itself; the hub is imported when a HubThread starts.

    from goldfive.testing import HubThread, ctl

    with HubThread(tmp_path / "hub.sqlite") as hub:
        result = ctl(hub.addr, "runs", "--json")
"""

from __future__ import annotations

import asyncio
import inspect
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from click.testing import Result

    from goldfive.remote.server import RemoteServer

__all__ = ["HubThread", "ctl", "free_port", "until", "until_sync"]

T = TypeVar("T")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at this moment (the OS picks it)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


async def until(
    check: Callable[[], Any] | Callable[[], Awaitable[Any]], what: str = "condition", *, timeout: float = 10.0, interval: float = 0.02
) -> Any:
    """Wait until ``check()`` (plain or async) returns something truthy, and return it.
    Raises AssertionError naming ``what`` after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for: {what} ({timeout}s)")
        await asyncio.sleep(interval)


def until_sync(check: Callable[[], T], what: str = "condition", *, timeout: float = 20.0, interval: float = 0.05) -> T:
    """``until`` for code outside an event loop (a test driving a hub in a thread)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for: {what} ({timeout}s)")
        time.sleep(interval)


class HubThread:
    """A hub (``goldfive serve`` with no run of its own) serving on ``listen`` (a free port of
    127.0.0.1 unless given), on an event loop in a thread of its own. ``server_kw`` are ``start_server``'s keywords (``token``,
    ``runner_token``, ...). ``call(coro)`` runs a coroutine on the hub's loop."""

    def __init__(self, db: str | os.PathLike[str], *, call_timeout: float = 30.0, listen: str = "127.0.0.1:0", **server_kw: Any) -> None:
        from goldfive.remote.host import RunHost
        from goldfive.remote.server import start_server

        self.call_timeout = call_timeout
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="goldfive-test-hub", daemon=True)
        self.thread.start()
        self.host = RunHost(Path(db))
        try:
            self.server: RemoteServer = self.call(start_server(self.host, listen=listen, **server_kw))
        except BaseException:
            self._close_loop()
            raise

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout or self.call_timeout)

    @property
    def addr(self) -> str:
        return self.server.address

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        try:
            self.call(self.server.stop(None))
        finally:
            self._close_loop()

    def _close_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    def __enter__(self) -> HubThread:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def ctl(*args: str, catch_exceptions: bool = False) -> Result:
    """``goldfive ctl ARGS...`` in this process (click's CliRunner): exit code and output."""
    from click.testing import CliRunner

    from goldfive.cli import main

    return CliRunner().invoke(main, ["ctl", *args], catch_exceptions=catch_exceptions)
