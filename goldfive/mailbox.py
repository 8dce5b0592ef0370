"""Mailbox: an unbounded FIFO with an awaiting ``get``, for the ControlChannel's two queues.

``asyncio.Queue`` without what the channel never uses (a size limit, ``put`` that waits,
``task_done`` / ``join``): a ``put_nowait`` is a deque append plus waking one getter, where the
Queue's made four Python calls, and every control's ack goes through one. The semantics the
channel relies on are the Queue's: items come out in put order; each item goes to one getter;
getters are served in arrival order; a getter cancelled after it was woken passes its wake-up
on, so no item waits while a getter waits.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

__all__ = ["Mailbox"]

T = TypeVar("T")


class Mailbox(Generic[T]):
    __slots__ = ("_items", "_getters")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._getters: deque[asyncio.Future[None]] = deque()

    def put_nowait(self, item: T) -> None:
        self._items.append(item)
        if self._getters:
            self._wake_one()

    def get_nowait(self) -> T:
        """The first item. Raises asyncio.QueueEmpty when there is none."""
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.popleft()

    async def get(self) -> T:
        """The first item, once there is one. Cancelling the caller takes nothing."""
        items = self._items
        while not items:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(fut)
            try:
                await fut
            except BaseException:
                fut.cancel()  # no-op when it was woken already
                try:
                    self._getters.remove(fut)
                except ValueError:  # it was woken (and so taken off): the wake-up goes on
                    if items:
                        self._wake_one()
                raise
        return items.popleft()

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)

    def _wake_one(self) -> None:
        getters = self._getters
        while getters:
            fut = getters.popleft()
            if not fut.done():
                fut.set_result(None)
                return
