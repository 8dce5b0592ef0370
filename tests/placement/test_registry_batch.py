"""SqliteRegistry.register_many: a burst of placed runs recorded in one commit (the Ray placer's
starts arriving together), as register records each, the one that stands kept."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from goldfive.store.registry import CONNECTED, PLACED, LaunchSpec, SqliteRegistry


def test_register_many_records_new_runs_in_one_transaction_and_keeps_those_recorded(tmp_path: Path) -> None:
    registry = SqliteRegistry(tmp_path / "hub.sqlite")
    launch = LaunchSpec(target="demo", goal="g")

    async def go() -> None:
        await registry.register("r0", CONNECTED, "alice")
        await registry.register_many([("r0", PLACED, "ci", launch), ("r1", PLACED, "ci", launch), ("r2", PLACED, "ci", None)])
        regs = await registry.all()
        assert sorted(regs) == ["r0", "r1", "r2"]
        assert (regs["r0"].origin, regs["r0"].owner) == (CONNECTED, "alice")  # recorded already: it stands
        assert (regs["r1"].origin, regs["r1"].owner, regs["r1"].launch) == (PLACED, "ci", launch)
        assert regs["r2"].launch is None
        with pytest.raises(AttributeError):  # a row that cannot be written: none of the batch is
            await registry.register_many([("r3", PLACED, "ci", launch), ("r4", PLACED, "ci", "not a launch")])  # type: ignore[list-item]
        assert sorted(await registry.all()) == ["r0", "r1", "r2"]
        await registry.register("r5", PLACED, "ci", launch)  # the connection is usable after the rollback

    try:
        asyncio.run(go())
    finally:
        registry.close()
    with sqlite3.connect(tmp_path / "hub.sqlite") as conn:  # written, not only in the connection's view
        assert [r for (r,) in conn.execute("SELECT run_id FROM hub_runs ORDER BY run_id")] == ["r0", "r1", "r2", "r5"]
