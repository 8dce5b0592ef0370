"""The runner's and client's end (goldfive.link) loads no server code, and the old import paths
of what moved there still work, each saying where it moved."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

#: Modules only a server needs: the hub's servicer and runs, the Runs service and run host,
#: the stores a hub writes with.
SERVER = ("goldfive.hub", "goldfive.remote", "goldfive.store", "goldfive.placement", "goldfive.cli")


@pytest.mark.parametrize("what", ["goldfive.link", "goldfive.link.runner", "goldfive.link.client"])
def test_the_runners_end_loads_no_server_module(what: str) -> None:
    code = (
        "import sys, goldfive\n"
        "before = set(sys.modules)\n"
        f"import {what}\n"
        "from goldfive import Runner\n"
        "new = sorted(m for m in set(sys.modules) - before if m.startswith('goldfive'))\n"
        "print('\\n'.join(new))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    server = [m for m in out if m.startswith(SERVER)]
    assert server == [], f"importing {what} loaded server modules: {server}"
    assert out and all(m.startswith("goldfive.link") for m in out), out


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("goldfive.hub.link", "goldfive.link.runner", "HubLink"),
        ("goldfive.hub.mux", "goldfive.link.mux", "HubMux"),
        ("goldfive.hub.buffer", "goldfive.link.buffer", "EventBuffer"),
        ("goldfive.remote.client", "goldfive.link.client", "RemoteClient"),
        ("goldfive.cli.inputs", "goldfive.inputs", "load_agent"),
        ("goldfive.cli.ctl_hub", "goldfive.cli.ctl.hub", "run_line"),
        ("goldfive.cli.ctl_approvals", "goldfive.cli.ctl.approvals", "os_user"),
    ],
)
def test_a_moved_module_still_imports_from_its_old_path_with_a_deprecation_warning(old: str, new: str, name: str) -> None:
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught)


def test_the_packages_users_import_still_export_what_moved() -> None:
    from goldfive.hub import EventBuffer, HubLink
    from goldfive.link import EventBuffer as E, HubLink as H
    from goldfive.remote import RemoteClient
    from goldfive.link import RemoteClient as R

    assert (EventBuffer, HubLink, RemoteClient) == (E, H, R)


def test_a_hub_builds_and_serves_runs_without_importing_the_cli() -> None:
    code = (
        "import sys, goldfive.remote.server, goldfive.remote.launch, goldfive.hub\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('goldfive.cli')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == []
