"""A person's marks on a run, kept by the hub (issue 23 item 1): a failed run is acknowledged
(``ctl ack-failure`` / ``dismiss``) and no longer needs anyone; an ended run is archived (``ctl
archive``) and left out of the lists until asked for. The marks live in the hub's registry
(SQLite, PostgreSQL), never in the run's events, and survive a restart."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldfive.store.registry import ACKNOWLEDGED, ARCHIVED, MemoryRegistry, SqliteRegistry
from goldfive.testing import ctl, until_sync
from tests.hub.test_hub_server import PLAN, Hub


def _runs(addr: str, *extra: str) -> dict[str, dict[str, Any]]:
    result = ctl(addr, "--json", "runs", *extra)
    assert result.exit_code == 0, result.output
    return {r["run_id"]: r for r in json.loads(result.output)}


def _module(directory: Path, body: str) -> str:
    name = f"marks_agent_{uuid.uuid4().hex[:8]}"
    (directory / f"{name}.py").write_text(body, encoding="utf-8")
    return name


def test_a_failure_is_acknowledged_and_an_ended_run_archived_from_ctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")
    failing = _module(tmp_path, "async def agent(task, session):\n    raise RuntimeError('kaboom')\n")
    working = _module(tmp_path, "async def agent(task, session):\n    return 'ok'\n")
    hub = Hub(tmp_path / "runs.sqlite")
    try:
        bad = ctl(hub.addr, "start", f"{failing}:agent", "--goal", "fail", "--plan", str(plan)).output.strip()
        good = ctl(hub.addr, "start", f"{working}:agent", "--goal", "work", "--plan", str(plan)).output.strip()
        live = ctl(hub.addr, "start", "demo", "--speed", "50").output.strip()
        until_sync(lambda: _runs(hub.addr)[bad]["state"] == "ABORTED" and _runs(hub.addr)[good]["state"] == "COMPLETED", what="both runs to end")
        assert _runs(hub.addr)[bad]["needs_you"].startswith("failed: ")

        # Only a failure can be acknowledged; the refusal says why, exit 1.
        refused = ctl(hub.addr, "ack-failure", good)
        assert refused.exit_code == 1 and "has not failed (COMPLETED)" in refused.output
        acked = ctl(hub.addr, "dismiss", bad[:6])
        assert acked.exit_code == 0 and "failure acknowledged" in acked.output, acked.output
        row = _runs(hub.addr)[bad]
        assert (row["state"], row.get("needs_you", ""), row["acknowledged_by"]) == ("ABORTED", "", "operator")
        text = ctl(hub.addr, "runs").output
        assert "NEEDS YOU" not in next(line for line in text.splitlines() if line.startswith(bad))

        # A live run is not archived; an ended one leaves the lists until --archived.
        still = ctl(hub.addr, "archive", live)
        assert still.exit_code == 1 and "cancel it (or let it end)" in still.output
        assert ctl(hub.addr, "archive", good).exit_code == 0
        assert good not in _runs(hub.addr) and _runs(hub.addr, "--archived")[good]["archived_by"] == "operator"
        assert "archived by operator" in ctl(hub.addr, "runs", "--archived").output
    finally:
        hub.stop()

    # The marks are the hub's records: a restarted hub still has them.
    again = Hub(tmp_path / "runs.sqlite")
    again.server.host.load_recorded()  # as `goldfive serve` does on start
    try:
        runs = _runs(again.addr)
        assert good not in runs and runs[bad].get("needs_you", "") == ""
        assert ctl(again.addr, "archive", "--undo", good).exit_code == 0
        assert good in _runs(again.addr)
        assert ctl(again.addr, "ack-failure", "--undo", bad).exit_code == 0
        assert _runs(again.addr)[bad]["needs_you"].startswith("failed: ")
    finally:
        again.stop()


async def _registry_round_trip(registry: Any) -> None:
    await registry.mark("r1", ACKNOWLEDGED, "alice")
    await registry.mark("r1", ACKNOWLEDGED, "bob")  # the first mark stands
    await registry.mark("r2", ARCHIVED, "bob")
    marks = await registry.marks()
    assert {r: sorted(m) for r, m in marks.items()} == {"r1": [ACKNOWLEDGED], "r2": [ARCHIVED]}
    assert marks["r1"][ACKNOWLEDGED].by == "alice"
    await registry.unmark("r2", ARCHIVED)
    await registry.forget("r1")
    assert await registry.marks() == {}


async def test_marks_round_trip_in_sqlite_and_memory(tmp_path: Path) -> None:
    sqlite = SqliteRegistry(tmp_path / "hub.sqlite")
    try:
        await _registry_round_trip(sqlite)
    finally:
        sqlite.close()
    await _registry_round_trip(MemoryRegistry())


async def test_marks_round_trip_in_postgres(pg_dsn: str) -> None:
    from goldfive.store.postgres import PostgresStore
    from goldfive.store.postgres_registry import PostgresRegistry

    store = await PostgresStore.open(pg_dsn)
    try:
        await _registry_round_trip(PostgresRegistry(store))
    finally:
        await store.close()
