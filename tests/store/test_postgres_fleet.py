"""The fleet's store on a real PostgreSQL server (goldfive.store.postgres_fleet, the FleetStore
the hub's fleet jobs call): each change another hub must hear of arrives as a typed
notification, and a notification goldfive did not write is skipped with a line in the log."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from goldfive import events as E
from goldfive.store.fleet import ControlAnswered, ControlRouted, Notification, Owner, OwnerChanged, Stored
from goldfive.store.postgres import EVENTS_CHANNEL, PostgresStore
from goldfive.store.postgres_fleet import OWNERS_CHANNEL, FleetTables, hub_channel, notification
from goldfive.types import Session


async def _next(notes: AsyncIterator[Notification], kind: type) -> Notification:
    """The next notification of ``kind`` (a hub hears its own writes too), within 5 s."""

    async def find() -> Notification:
        async for note in notes:
            if isinstance(note, kind):
                return note
        raise AssertionError("the listening connection ended")

    return await asyncio.wait_for(find(), 5.0)


async def test_each_change_another_hub_must_hear_of_comes_as_a_typed_notification(
    pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = await PostgresStore.open(pg_dsn)
    a = FleetTables(store, "hub-a", "127.0.0.1:1001")
    b = FleetTables(store, "hub-b", "127.0.0.1:1002")
    try:
        await a.join()
        await b.join()
        async with b.listen() as heard_by_b, a.listen() as heard_by_a:
            await a.claim("run-1", "runner-host", 42, True)
            assert await _next(heard_by_b, OwnerChanged) == OwnerChanged(
                "hub-a", "run-1", "127.0.0.1:1001", Owner("hub-a", "runner-host", 42, hosted=True)
            )
            await store.append([E.run_started(Session(run_id="run-1"), goal_summary="g")], notify="hub-a")
            assert await _next(heard_by_b, Stored) == Stored("hub-a", "run-1", 0)

            registered: list[int] = []
            row = await a.route("run-1", "hub-b", b"a control", registered.append)
            assert registered == [row]
            assert await _next(heard_by_b, ControlRouted) == ControlRouted(row)
            assert await b.routed(row) == ("run-1", "hub-a", b"a control")
            await b.answer(row, "hub-a", b"its ack")
            assert await _next(heard_by_a, ControlAnswered) == ControlAnswered(row)
            assert await a.ack_of(row) == b"its ack"

            with caplog.at_level(logging.WARNING, logger="goldfive.store"):
                async with store.connection() as conn:  # a notification goldfive did not write
                    await conn.execute("SELECT pg_notify(%s, %s)", (hub_channel("hub-b"), "not\tours\tat all"))
                await a.release("run-1")
                assert await _next(heard_by_b, OwnerChanged) == OwnerChanged("hub-a", "run-1", "127.0.0.1:1001", None)
            assert "ignored a malformed notification on goldfive_hub_hub-b" in caplog.text
            assert await a.owners() == {}
    finally:
        await store.close()


def test_a_notification_is_parsed_from_the_format_its_writer_uses_or_refused() -> None:
    assert notification(EVENTS_CHANNEL, "h\tr\t7") == Stored("h", "r", 7)
    assert notification(OWNERS_CHANNEL, "h\tr\thost\t9\taddr\t0") == OwnerChanged("h", "r", "addr", Owner("h", "host", 9))
    assert notification(OWNERS_CHANNEL, "h\tr\t-\t0\taddr\t0") == OwnerChanged("h", "r", "addr", None)
    assert notification(hub_channel("h"), "control\t3") == ControlRouted(3)
    assert notification(hub_channel("h"), "ack\t3") == ControlAnswered(3)
    for channel, payload in [
        (EVENTS_CHANNEL, "h\tr"),
        (EVENTS_CHANNEL, "h\tr\tseven"),
        (OWNERS_CHANNEL, "h\tr\thost\tpid\taddr\t0"),
        (hub_channel("h"), "delete\t3"),
        (hub_channel("h"), "control"),
    ]:
        with pytest.raises(ValueError):
            notification(channel, payload)
