"""SQL on the events table lives in goldfive.store alone (issue 22's gate): every other module
reads and writes recorded events through the store's functions and its EventLog, so the table's
layout is known in one package. The source is scanned, as tests/test_import_layers.py does for
imports; a statement naming the table through a placeholder (``FROM {table}``) counts too."""

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


def offending_lines(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("goldfive/store/", "goldfive/pb/")):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if EVENTS_SQL.search(line):
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
