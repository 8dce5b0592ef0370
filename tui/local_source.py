"""LocalRunSource: a Runner in this process, as a RunSource for the TUI.

The run executes in the app's event loop (started by ``start``); the app reads the run's
InMemorySink through ``events()`` and sends each control with ``ControlChannel.request``,
which returns that control's ack.
"""

from __future__ import annotations

import asyncio
import logging
from typing import AsyncIterator, Callable

from goldfive.aio import cancel_and_wait
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
        self._run_task: asyncio.Task[object] | None = None
        self.outcome: object | None = None
        self.error: BaseException | None = None

    async def start(self) -> None:
        if self._run_task is not None:
            return
        self._run_task = asyncio.get_running_loop().create_task(self._run(), name="goldfive-run")

    async def _run(self) -> object:
        try:
            self.outcome = await self.runner.run(self.user_input)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the sinks already got RunAborted; keep the app alive
            log.exception("run failed")
            self.error = exc
        return self.outcome

    async def events(self) -> AsyncIterator[Event | Missed]:
        sub = self.sink.subscribe()
        try:
            async for item in sub:
                yield item
        finally:
            sub.close()

    async def send(self, msg: ControlMessage) -> ControlAck:
        return await self.channel.request(msg)

    async def stop(self) -> None:
        if self._run_task is not None:
            await cancel_and_wait([self._run_task])  # _run recorded a failure in self.error
        await self.runner.close()
        self.channel.close()
        await self.channel.refuse_pending("run not active: the TUI closed")
