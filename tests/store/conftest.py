"""A real PostgreSQL server for the store tests, one per session (tests/pg_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pg_server import PgServer, start_postgres


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    server = start_postgres()
    try:
        yield server
    finally:
        server.destroy()
