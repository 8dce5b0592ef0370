"""The hub's registry (goldfive.store.registry) in a PostgreSQL database shared by several hubs:
one registration per run for the whole fleet, so a runner refused by one hub is refused by
every hub, and a hub continues only the runs some hub of the fleet started."""

from __future__ import annotations

from goldfive.store.postgres import PostgresStore
from goldfive.store.registry import LaunchSpec, Marks, Registration, RoutedControl, _marks, _now_ms, _registration

__all__ = ["PostgresRegistry"]


class PostgresRegistry:
    def __init__(self, store: PostgresStore) -> None:
        self.store = store

    async def register(self, run_id: str, origin: str, owner: str, launch: LaunchSpec | None = None) -> Registration:
        async with self.store.connection() as conn:
            await conn.execute(
                "INSERT INTO goldfive_runs (run_id, origin, owner, launch, created_at_ms) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (run_id) DO NOTHING",
                (run_id, origin, owner, launch.to_json() if launch is not None else None, _now_ms()),
            )
            row = await (
                await conn.execute(
                    "SELECT run_id, origin, owner, launch, created_at_ms FROM goldfive_runs WHERE run_id = %s", (run_id,)
                )
            ).fetchone()
        assert row is not None
        return _registration(tuple(row))

    async def get(self, run_id: str) -> Registration | None:
        async with self.store.connection() as conn:
            row = await (
                await conn.execute(
                    "SELECT run_id, origin, owner, launch, created_at_ms FROM goldfive_runs WHERE run_id = %s", (run_id,)
                )
            ).fetchone()
        return _registration(tuple(row)) if row is not None else None

    async def all(self) -> dict[str, Registration]:
        async with self.store.connection() as conn:
            rows = await (await conn.execute("SELECT run_id, origin, owner, launch, created_at_ms FROM goldfive_runs")).fetchall()
        return {r.run_id: r for r in (_registration(tuple(row)) for row in rows)}

    async def forget(self, run_id: str) -> None:
        async with self.store.connection() as conn:
            for table in ("goldfive_runs", "goldfive_writers", "goldfive_routed", "goldfive_marks"):
                await conn.execute(f"DELETE FROM {table} WHERE run_id = %s", (run_id,))

    async def routed(self, run_id: str, control: RoutedControl) -> None:
        async with self.store.connection() as conn:
            await conn.execute(
                "INSERT INTO goldfive_routed (run_id, control_id, kind, author, target_id, sent_at_ms)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (run_id, control_id) DO NOTHING",
                (run_id, control.control_id, control.kind, control.author, control.target_id, control.sent_at_ms or _now_ms()),
            )

    async def routed_controls(self, run_id: str) -> dict[str, RoutedControl]:
        async with self.store.connection() as conn:
            rows = await (
                await conn.execute(
                    "SELECT control_id, kind, author, target_id, sent_at_ms FROM goldfive_routed WHERE run_id = %s", (run_id,)
                )
            ).fetchall()
        return {str(c): RoutedControl(str(c), str(k), str(a), str(t), int(ms)) for c, k, a, t, ms in rows}

    async def mark(self, run_id: str, mark: str, by: str) -> None:
        async with self.store.connection() as conn:
            await conn.execute(
                "INSERT INTO goldfive_marks (run_id, mark, by_whom, at_ms) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (run_id, mark) DO NOTHING",
                (run_id, mark, by, _now_ms()),
            )

    async def unmark(self, run_id: str, mark: str) -> None:
        async with self.store.connection() as conn:
            await conn.execute("DELETE FROM goldfive_marks WHERE run_id = %s AND mark = %s", (run_id, mark))

    async def marks(self) -> Marks:
        async with self.store.connection() as conn:
            rows = await (await conn.execute("SELECT run_id, mark, by_whom, at_ms FROM goldfive_marks")).fetchall()
        return _marks([tuple(r) for r in rows])

    def close(self) -> None:
        return None  # the store's pool is closed by its owner
