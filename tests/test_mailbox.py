"""goldfive.mailbox.Mailbox keeps what the ControlChannel relied on asyncio.Queue for: put
order, one item per getter, getters served in arrival order, and a wake-up never lost to a
getter cancelled after it was woken."""

from __future__ import annotations

import asyncio

import pytest

from goldfive.mailbox import Mailbox


async def test_items_come_out_in_put_order_and_get_nowait_refuses_an_empty_box() -> None:
    box: Mailbox[int] = Mailbox()
    with pytest.raises(asyncio.QueueEmpty):
        box.get_nowait()
    for i in range(3):
        box.put_nowait(i)
    assert (box.qsize(), box.empty()) == (3, False)
    assert [box.get_nowait(), await box.get(), box.get_nowait()] == [0, 1, 2]
    assert (box.qsize(), box.empty()) == (0, True)


async def test_waiting_getters_are_served_one_item_each_in_arrival_order() -> None:
    box: Mailbox[str] = Mailbox()
    first = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    second = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    box.put_nowait("a")
    await asyncio.sleep(0)
    assert first.done() and first.result() == "a" and not second.done()
    box.put_nowait("b")
    assert await second == "b"


async def test_a_getter_cancelled_after_its_wake_up_passes_the_item_to_the_next() -> None:
    box: Mailbox[str] = Mailbox()
    first = asyncio.ensure_future(box.get())
    second = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)  # both wait
    box.put_nowait("x")  # wakes the first ...
    first.cancel()  # ... which is cancelled before it ran
    assert await asyncio.wait_for(second, 1) == "x"
    assert first.cancelled() and box.empty()


async def test_a_cancelled_get_takes_nothing() -> None:
    box: Mailbox[int] = Mailbox()
    getter = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    getter.cancel()
    await asyncio.gather(getter, return_exceptions=True)
    box.put_nowait(1)
    assert box.get_nowait() == 1


async def test_an_item_taken_before_the_woken_getter_runs_leaves_it_waiting_for_the_next() -> None:
    box: Mailbox[int] = Mailbox()
    getter = asyncio.ensure_future(box.get())
    await asyncio.sleep(0)
    box.put_nowait(1)
    assert box.get_nowait() == 1  # taken by someone else first
    await asyncio.sleep(0)
    assert not getter.done()
    box.put_nowait(2)
    assert await getter == 2
