"""SQL on the events table lives in goldfive.store alone (issue 22's gate): every other module
reads and writes recorded events through the store's functions and its EventLog, so the table's
layout is known in one package. The source is scanned, as tests/test_import_layers.py does for
imports; a statement naming the table through a placeholder (``FROM {table}``) counts too.

The same for the rest of the database: the fleet's and the registry's tables, LISTEN and NOTIFY,
and PostgreSQL connections are goldfive.store's (the hub's fleet calls a FleetStore's methods),
and no module reaches into another object's connection pool (``store._pool``): a store's own
methods use it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A statement on the events table: SQLite's ``events``, PostgreSQL's ``goldfive_events``, or a
#: table name put in by a placeholder.
EVENTS_SQL = re.compile(
    r"\b(?:FROM|INTO|UPDATE|JOIN|TABLE(?: IF NOT EXISTS)?)\s+(?:goldfive_events|events)\b"
    r"|\bevents WHERE\b"
    r"|\b(?:FROM|INTO|UPDATE|JOIN|TABLE(?: IF NOT EXISTS)?)\s+\{[^}]*table[^}]*\}"
)


#: SQL on goldfive's other tables (all named goldfive_*), LISTEN, NOTIFY, and a PostgreSQL
#: connection or driver of its own: outside goldfive.store, a module asks the store instead.
DATABASE = re.compile(
    r"\b(?:FROM|INTO|UPDATE|JOIN|TABLE(?: IF NOT EXISTS)?)\s+goldfive_\w+"
    r"|\bLISTEN\s+[\"'{]"
    r"|\bpg_notify\s*\("
    r"|^\s*(?:import|from)\s+psycopg"
    r"|\bpsycopg\.\w*Connection\b"
)

#: Another object's connection pool (``self.store._pool``), anywhere: only its own class uses it.
OTHERS_POOL = re.compile(r"(?<!\bself)\._pool\b")


def offending_lines(root: Path, pattern: re.Pattern[str] = EVENTS_SQL, *, in_store: bool = False) -> list[str]:
    """Lines of ``root``'s modules matching ``pattern``, goldfive.store's left out unless
    ``in_store`` (generated code always)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("goldfive/pb/") or (rel.startswith("goldfive/store/") and not in_store):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    return found


def test_sql_on_the_events_table_appears_only_under_goldfive_store() -> None:
    assert offending_lines(ROOT / "goldfive") == []
    assert offending_lines(ROOT / "tui") == []


def test_the_scan_finds_each_shape_of_statement(tmp_path: Path) -> None:
    """The scan is not blind: each way main wrote such SQL before the move is found."""
    shapes = [
        'conn.execute("SELECT payload FROM events WHERE run_id = ?")',
        'f"SELECT run_id FROM events{not_the_hubs} GROUP BY run_id"',
        'self._insert = f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?)"',
        'f"CREATE TABLE IF NOT EXISTS {table} ("',
        'f" FROM {_check_table(table)} GROUP BY run_id"',
        '"SELECT max(sequence) FROM goldfive_events WHERE run_id = %s"',
    ]
    assert all(EVENTS_SQL.search(s) for s in shapes), [s for s in shapes if not EVENTS_SQL.search(s)]
    assert not EVENTS_SQL.search('"SELECT key FROM hub_link_key WHERE id = 1"')
    assert not EVENTS_SQL.search("the events were read")


def test_the_fleets_sql_listen_notify_and_connections_are_the_stores_alone() -> None:
    assert offending_lines(ROOT / "goldfive", DATABASE) == []
    assert offending_lines(ROOT / "tui", DATABASE) == []


def test_no_module_reaches_into_another_objects_connection_pool() -> None:
    assert offending_lines(ROOT / "goldfive", OTHERS_POOL, in_store=True) == []
    assert offending_lines(ROOT / "tui", OTHERS_POOL, in_store=True) == []


def test_the_database_scans_find_what_the_fleet_wrote_before_its_split() -> None:
    """Lines of main's goldfive/hub/fleet.py and store/postgres_fleet.py before the fleet was
    split into its jobs are found; prose naming a table and a store's own pool are not."""
    shapes = [
        "conn = await psycopg.AsyncConnection.connect(self.store.dsn, autocommit=True, connect_timeout=5)",
        "    import psycopg  # the [postgres] extra",
        """await conn.execute(f'LISTEN "{channel}"')""",
        '"SELECT pg_notify(%s, %s)", (OWNERS_CHANNEL, payload)',
        '"DELETE FROM goldfive_run_owners WHERE run_id = %s AND hub_id = %s", (run_id, self.hub_id)',
        '"INSERT INTO goldfive_controls (run_id, from_hub, to_hub, control) VALUES (%s, %s, %s, %s) RETURNING id"',
        '"UPDATE goldfive_hubs SET seen_at = now() WHERE hub_id = %s"',
    ]
    assert all(DATABASE.search(s) for s in shapes), [s for s in shapes if not DATABASE.search(s)]
    assert not DATABASE.search("- ``goldfive_run_owners`` says which hub each run's runner is connected to")
    assert not DATABASE.search("Every hub LISTENs and *follows*")
    assert not DATABASE.search('if not type(exc).__module__.startswith("psycopg"):')
    assert OTHERS_POOL.search("async with self.store._pool.connection() as conn:")
    assert OTHERS_POOL.search("await store._pool.close()")
    assert not OTHERS_POOL.search("async with self._pool.connection() as conn:")
    assert not OTHERS_POOL.search("self._pools.append(pool)")
