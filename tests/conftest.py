import os

# Snapshot and TUI tests render colours; a NO_COLOR in the environment would change them.
os.environ.pop("NO_COLOR", None)
# The TUI remembers the theme a person picked; tests must neither read nor change a real one.
if "GOLDFIVE_CONFIG_DIR" not in os.environ:
    import tempfile

    os.environ["GOLDFIVE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="goldfive-test-config-")

# grpc.aio shuts its process-wide completion queue down when its last channel or server is
# collected, and joins the queue's poller thread there; with a call still pending in gRPC's
# core that join never returns, and the test process hangs in the garbage collector (seen in a
# worker whose tests left no other gRPC object alive). One reference held for the whole
# session keeps the queue up until the process ends.
import grpc.aio  # noqa: E402

grpc.aio.init_grpc_aio()

# The chaos suite's options (--chaos-long, --chaos-seed) must be registered before collection.
from tests.chaos.options import pytest_addoption  # noqa: E402,F401

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def pg_server():  # type: ignore[no-untyped-def]
    """A real PostgreSQL server for the whole session (tests/pg_server.py), started on first use."""
    from tests.pg_server import start_postgres

    server = start_postgres()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def pg_dsn(pg_server, request):  # type: ignore[no-untyped-def]
    """A fresh, empty database on the session's server, for one test."""
    import re
    import uuid

    import psycopg

    name = "t_" + re.sub(r"[^a-z0-9]", "", request.node.name.lower())[:40] + "_" + uuid.uuid4().hex[:6]
    with psycopg.connect(pg_server.dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield pg_server.dsn.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(pg_server.dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


#: What `-m "not slow"` leaves out: real clusters and databases, the adversarial pass, browsers,
#: mypy over the whole package, twenty SIGKILLs (each test here takes several seconds; every
#: run prints its 15 slowest, so one that grows slow shows there first).
_SLOW_DIRS = ("ray", "fleet", "chaos")
_SLOW_MODULES = ("test_types_mypy.py", "test_durable_kill.py", "test_web.py", "test_web_security.py", "test_phoenix.py", "test_phone_chromium.py")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        rel = os.path.relpath(str(item.path), tests_dir).split(os.sep)
        if rel[0] in _SLOW_DIRS or rel[-1] in _SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
        # The two workers (-n 2 --dist loadgroup) take a file at a time, so a module's server or
        # cluster starts once; tests/ray's files all go to one worker, one after another: two
        # Ray clusters starting at once on two cores timed out ("the GCS has become overloaded").
        item.add_marker(pytest.mark.xdist_group("ray" if rel[0] == "ray" else "/".join(rel)))
