import os
import sys

# The suite writes bytecode caches even where PYTHONDONTWRITEBYTECODE is set (as on CI's
# machines): without them every test process rewrote and compiled every test module again
# (pytest's assertion rewriting, about half of a worker's 30 s collection), and every goldfive
# process a test starts (hubs, CLIs, Ray workers) compiled goldfive's modules again.
# __pycache__ is git-ignored.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Snapshot and TUI tests render colours; a NO_COLOR in the environment would change them.
os.environ.pop("NO_COLOR", None)
# The TUI remembers the theme a person picked; tests must neither read nor change a real one.
if "GOLDFIVE_CONFIG_DIR" not in os.environ:
    import tempfile

    os.environ["GOLDFIVE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="goldfive-test-config-")

# A suite started in the background by a non-interactive shell (`cmd &` in a script) inherits
# SIGINT ignored, and so does every process a test starts: a test's Ctrl-C to its child is then
# ignored (tests/cli/test_cli_interrupt.py failed so, 3 tests exiting 0). The suite runs as from
# a terminal: SIGINT at Python's default and unblocked, here and in the xdist workers.
import signal  # noqa: E402

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

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
from collections import Counter  # noqa: E402

from tests.sigint_guard import put_back, sigint_state  # noqa: E402


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
    # Longest groups first, so neither worker is left alone with a long one at the end (addopts
    # has --no-loadscope-reorder: xdist would order the groups by their count of tests, which put
    # the Ray group, 27 tests and 210 s one after another, anywhere in the run). Then by count
    # of tests, as xdist would; within a group, collection order.
    groups = [_group_of(item) for item in items]
    size = Counter(groups)
    first = {group: index for index, group in reversed(list(enumerate(groups)))}
    order = sorted(range(len(items)), key=lambda i: (-_LONG_GROUPS.get(groups[i], 0), -size[groups[i]], first[groups[i]], i))
    items[:] = [items[i] for i in order]


#: Groups that take over 30 s of a worker's time (seconds measured in a clean-clone CI run here,
#: 2026-12-03; a cold mypy cache makes the type check the long one).
_LONG_GROUPS = {
    "ray": 210,
    "fleet/test_fleet.py": 92,
    "test_types_mypy.py": 86,
    "tui/test_keys.py": 57,
    "cli/test_web.py": 51,
    "durable/test_durable_kill.py": 36,
    "adapters/test_claude_agent_sdk.py": 32,
}


def _group_of(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    return str(mark.args[0]) if mark and mark.args else ""


@pytest.fixture(autouse=True)
def _sigint_left_as_found(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Fails, by name, a test that leaves SIGINT ignored, blocked or handled otherwise than it
    found it (tests/sigint_guard.py says why), and puts SIGINT back for the tests after it."""
    before = sigint_state()
    yield
    changed = put_back(before, request.node.nodeid)
    if changed:
        pytest.fail(changed, pytrace=False)


@pytest.fixture(autouse=True)
def _run_defaults_left_as_found():  # type: ignore[no-untyped-def]
    """The process's run defaults (what ``--approvals review``, ``--budget`` or ``--prices``
    install for every run of a CLI process) put back after each test: a CLI run in process
    installs them, and a reviewer left behind reviewed a later test's approvals (an
    ``approval_reviewed`` where that test expected its reminders)."""
    from goldfive.run.defaults import install_run_defaults, run_defaults

    before = run_defaults()
    yield
    install_run_defaults(before)


@pytest.hookimpl(trylast=True)  # after the session's fixtures are torn down (runner's sessionfinish)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker, the garbage collection pytest does at its very end (five full passes,
    for unraisable exceptions) happens here instead, before the worker tells the controller it
    has finished; then what is left is frozen, so those five passes find it done. The controller
    ends the workers by closing their gateways, and execnet SIGINTs a worker whose main thread
    has not returned 5 s later (SIGKILL after 10 s more). Five full passes over a worker's heap
    (a million objects after tests/tui and tests/cli) took 35 s at load 20; the SIGINT landed in
    them, and CI showed a KeyboardInterrupt raised in a gc callback (hypothesis's). Frozen, the
    passes took under 0.01 s."""
    if not hasattr(session.config, "workerinput"):
        return
    import gc

    for _ in range(5):  # as many passes as pytest's own (unraisableexception.cleanup)
        gc.collect()
    gc.freeze()
