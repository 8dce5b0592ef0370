"""One outstanding ``control.receive()`` per run, shared by every wait of the executor."""

from __future__ import annotations

import asyncio

from goldfive.control import ControlChannel, ControlMessage


class Receiver:
    """The executor's single pending receive on the channel.

    It is raced against the agents while a batch runs and awaited while the run is paused,
    and it stays armed across task boundaries instead of being created and cancelled for
    every batch. A message it already took comes before anything still queued, so whoever
    reads the channel calls ``take()`` first: send order is kept.
    """

    def __init__(self, control: ControlChannel | None) -> None:
        self.control = control
        self.task: asyncio.Task[ControlMessage | None] | None = None

    def usable(self) -> bool:
        ch = self.control
        return ch is not None and not (ch.closed and ch.pending() == 0)

    def arm(self) -> asyncio.Task[ControlMessage | None] | None:
        """The pending receive, started if needed; None when the channel can give nothing."""
        if self.task is None and self.usable():
            assert self.control is not None
            self.task = asyncio.get_running_loop().create_task(self.control.receive())
        return self.task

    def take(self) -> ControlMessage | None:
        """The message the pending receive already took, if it finished; it is then disarmed."""
        task = self.task
        if task is None or not task.done():
            return None
        self.task = None
        return None if task.cancelled() else task.result()

    async def stop(self) -> ControlMessage | None:
        """Disarm; a message the receive already took is returned, not lost."""
        task, self.task = self.task, None
        return await stop_receiving(task)


async def stop_receiving(recv: asyncio.Task[ControlMessage | None] | None) -> ControlMessage | None:
    """Cancel an outstanding receive; a message it already took is returned, not lost."""
    if recv is None:
        return None
    if not recv.done():
        recv.cancel()
        # asyncio.wait, not ``await recv``: a cancel of the caller itself must propagate, not
        # pass for the receive's own cancellation and be swallowed.
        await asyncio.wait({recv})
    if recv.cancelled():
        return None
    return recv.result()
