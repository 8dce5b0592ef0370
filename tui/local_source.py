"""LocalRunSource: a Runner in this process, as a RunSource for the TUI.

The run executes in the app's event loop (started by ``start``); the app reads the run's
InMemorySink through ``events()`` and sends controls on the run's ControlChannel. One task
reads ``channel.acks()`` and resolves each sender's future by control id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import AsyncIterator, Callable

from goldfive.control import ControlAck, ControlChannel, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink, Missed

log = logging.getLogger("tui.local_source")

#: Builds the run: given the sinks and the channel, return the Runner and its input.
RunnerFactory = Callable[[list[object], ControlChannel], tuple[Runner, str]]


class LocalRunSource:
    def __init__(self, factory: RunnerFactory, *, title: str = "", extra_sinks: list[object] | None = None) -> None:
        self.title = title
        self.sink = InMemorySink()
        self.channel = ControlChannel()
        self.runner, self.user_input = factory([self.sink, *(extra_sinks or [])], self.channel)
        if not self.title:
            self.title = self.user_input
        self._waiters: dict[str, asyncio.Future[ControlAck]] = {}
        self._run_task: asyncio.Task[object] | None = None
        self._ack_task: asyncio.Task[None] | None = None
        self.outcome: object | None = None
        self.error: BaseException | None = None

    async def start(self) -> None:
        if self._run_task is not None:
            return
        loop = asyncio.get_running_loop()
        self._ack_task = loop.create_task(self._read_acks(), name="goldfive-acks")
        self._run_task = loop.create_task(self._run(), name="goldfive-run")

    async def _run(self) -> object:
        try:
            self.outcome = await self.runner.run(self.user_input)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the sinks already got RunAborted; keep the app alive
            log.exception("run failed")
            self.error = exc
        return self.outcome

    async def _read_acks(self) -> None:
        async for ack in self.channel.acks():
            fut = self._waiters.pop(ack.control_id, None)
            if fut is not None and not fut.done():
                fut.set_result(ack)

    async def events(self) -> AsyncIterator[Event | Missed]:
        sub = self.sink.subscribe()
        try:
            async for item in sub:
                yield item
        finally:
            sub.close()

    async def send(self, msg: ControlMessage) -> ControlAck:
        fut: asyncio.Future[ControlAck] = asyncio.get_running_loop().create_future()
        self._waiters[msg.id] = fut
        try:
            await self.channel.send(msg)
        except Exception:
            self._waiters.pop(msg.id, None)
            raise
        return await fut

    async def stop(self) -> None:
        if self._run_task is not None and not self._run_task.done():
            self._run_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._run_task
        await self.runner.close()
        self.channel.close()
        if self._ack_task is not None:
            self._ack_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ack_task
        for fut in self._waiters.values():
            if not fut.done():
                fut.cancel()
