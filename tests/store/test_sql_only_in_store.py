"""SQL on the events table lives in goldfive.store alone (issue 22's gate): every other module
reads and writes recorded events through the store's functions and its EventLog, so the table's
layout is known in one package. The source is scanned, as tests/test_import_layers.py does for
imports; a statement naming the table through a placeholder (``FROM {table}``) counts too.

The same for the rest of the database: the fleet's and the registry's tables, LISTEN and NOTIFY,
and PostgreSQL connections are goldfive.store's (the hub's fleet calls a FleetStore's methods),
and no module reaches into another object's connection pool (``store._pool``): a store's own
methods use it."""

from __future__ import annotations

import ast
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


#: A recording's own encoding, outside goldfive.store: a JSONL line made or read (the log's
#: ``encode_line`` / ``decode_line`` / ``line_of``, compat's ``recorded_dict`` /
#: ``decode_recorded_dict``), a stored event's bytes made or decoded (``recorded_bytes``, the
#: mark it appends, ``decode_recorded``), a writer batching recordings of its own
#: (``BatchingSink``, gone), or a SQLite file opened for itself.
RECORDING_IO = re.compile(
    r"\b(?:encode_line|decode_line|line_of|recorded_dict|decode_recorded_dict|decode_recorded|recorded_bytes)\s*\("
    r"|\bBatchingSink\b|\bRECORDING_MARK\b"
    r"|\bsqlite3\.connect\s*\("
)

#: Where the encoding is defined, and the one SQLite file that is not a recording. The replay
#: picker (goldfive/recording.py) and resume (goldfive/durable/store.py) decoded their rows
#: themselves until they read through the recording's EventLog. The list may shrink, never grow.
RECORDING_IO_LEFT = {
    "goldfive/compat.py",  # where the encoding is defined (the store calls it)
    "goldfive/phone/links.py",  # the phone links' own database, no recording
}


def test_recordings_are_encoded_read_and_opened_under_goldfive_store_only() -> None:
    """Every writer of a recording is a RecordingSink over a log (SQLite, JSONL, PostgreSQL),
    every reader a store function: no module outside goldfive.store makes or reads a JSONL
    line, decodes a stored event or opens a SQLite file, but those listed above."""
    found = offending_lines(ROOT / "goldfive", RECORDING_IO) + offending_lines(ROOT / "tui", RECORDING_IO)
    assert [f for f in found if f.split(":")[0] not in RECORDING_IO_LEFT] == []


def test_the_recording_scan_finds_what_the_jsonl_sink_did_before_it_went_through_its_log() -> None:
    """Lines of main's goldfive/sinks/jsonl.py and durable/store.py before the move are found;
    an import of the log's functions, and prose naming them, are not."""
    shapes = [
        "        self._add(encode_line(event))",
        "    event = decode_recorded_dict(obj, _parse_event)",
        "    return message_to_json_line(recorded_dict(message_to_dict(event)))",
        "            events.append(decode_line(raw))",
        "class JSONLPersistenceSink(BatchingSink[str]):",
        '        return sqlite3.connect(f"file:{path}?mode=ro", uri=True)',
    ]
    assert all(RECORDING_IO.search(s) for s in shapes), [s for s in shapes if not RECORDING_IO.search(s)]
    assert not RECORDING_IO.search("from goldfive.store.jsonl import JsonlLog, decode_line, encode_line, replay_from_jsonl")
    assert not RECORDING_IO.search("its line format, ``encode_line`` and ``decode_line``, are the log's")


#: Where an Event is parsed from bytes outside goldfive.store: where the recorded encoding is
#: defined, and the runner's spill file (its own format for events not yet sent, never a
#: recording). The list may shrink, never grow.
EVENT_PARSE_LEFT = {"goldfive/compat.py", "goldfive/link/buffer.py"}

_NOT_PROTOBUF = {"asyncio", "threading", "multiprocessing"}


def _is_event_class(node: ast.expr) -> bool:
    """``Event`` or ``something.Event`` (``events_pb2.Event``, ``pb.Event``), not asyncio's."""
    if isinstance(node, ast.Name):
        return node.id == "Event"
    return isinstance(node, ast.Attribute) and node.attr == "Event" and not (isinstance(node.value, ast.Name) and node.value.id in _NOT_PROTOBUF)


def event_parses(source: str) -> list[int]:
    """Lines of ``source`` that parse an Event from bytes: ``Event.FromString(b)``, or
    ``ev.ParseFromString(b)`` on a name bound to ``Event()``."""
    tree = ast.parse(source)
    events = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _is_event_class(node.value.func)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner, method = node.func.value, node.func.attr
        if method == "FromString" and _is_event_class(owner):
            found.append(node.lineno)
        elif method == "ParseFromString" and isinstance(owner, ast.Name) and owner.id in events:
            found.append(node.lineno)
    return found


def test_no_module_outside_goldfive_store_parses_a_stored_event_itself() -> None:
    """A stored event is read through the store (its EventLog, or goldfive.compat's
    ``decode_recorded``, which translates an old recording's schema): resume's list of
    interrupted runs parsed a RunStarted row itself and misread an old recording's goal."""
    found = []
    for root in (ROOT / "goldfive", ROOT / "tui"):
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(("goldfive/pb/", "goldfive/store/")) or rel in EVENT_PARSE_LEFT:
                continue
            found += [f"{rel}:{line}" for line in event_parses(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_event_parse_scan_finds_what_resume_did_and_not_asyncio_events() -> None:
    before = (
        "def _run_line(conn, run_id):\n"
        "    from goldfive.pb.goldfive.v1.events_pb2 import Event\n"
        "    ev = Event()\n"
        "    ev.ParseFromString(started)\n"
        "    other = events_pb2.Event.FromString(payload)\n"
    )
    assert event_parses(before) == [4, 5]
    assert event_parses("wake = asyncio.Event()\nwake.ParseFromString(b'')\nack = control_pb2.ControlAck()\nack.ParseFromString(b'')\n") == []


#: Reading a SQLite recording beside its EventLog: a read-only connection of one's own, a
#: run's reader built on a path, or the store's row functions called on such a connection.
#: The hub's own reads (goldfive/remote/host.py) did all of these until they went through its
#: SqliteLog; a caller asks the log (``SqliteLog.history``, ``run_ids``, ``record``...).
BESIDE_THE_LOG = re.compile(
    r"(?<!\.)\b(?:connect_read_only|RunHistory|recorded_run_ids|read_record|run_last_sequence|next_run_id|oldest_first)\s*\("
)


def test_every_reader_of_a_sqlite_recording_goes_through_its_log() -> None:
    found = offending_lines(ROOT / "goldfive", BESIDE_THE_LOG) + offending_lines(ROOT / "tui", BESIDE_THE_LOG)
    assert found == []


def test_the_reader_scan_finds_what_the_hub_did_before_it_read_through_its_log() -> None:
    shapes = [
        "            conn = connect_read_only(self.db_path)",
        "                    stored = RunHistory(self.db_path, run_id).events(after, kinds=SUMMARY_KINDS)",
        "            return oldest_first(conn, [rid for rid in recorded_run_ids(conn, ordered=False) if rid not in runs])",
        "            rec = read_record(conn, run_id)",
        "            return next_run_id(conn, run_id, inclusive=True) == run_id",
    ]
    assert all(BESIDE_THE_LOG.search(s) for s in shapes), [s for s in shapes if not BESIDE_THE_LOG.search(s)]
    assert not BESIDE_THE_LOG.search("                return stored.oldest_first([rid for rid in stored.run_ids(ordered=False)])")
    assert not BESIDE_THE_LOG.search("history: RunHistory | None = None,")
