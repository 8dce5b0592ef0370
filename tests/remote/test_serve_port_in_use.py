"""A second server on a port already served fails to bind, in one line, instead of sharing it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from goldfive.errors import ServeConfigError
from goldfive.remote import RunHost, start_server
from goldfive.remote.server import _in_use


async def test_start_server_on_a_port_already_served_raises_serve_config_error(tmp_path: Path) -> None:
    first = await start_server(RunHost(tmp_path / "a.sqlite"), listen="127.0.0.1:0")
    try:
        with pytest.raises(ServeConfigError, match="already in use"):
            second = await start_server(RunHost(tmp_path / "b.sqlite"), listen=first.address)
            await second.stop(None)
    finally:
        await first.stop(None)


async def test_grpc_itself_refuses_to_share_a_served_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the pre-check, grpc's own bind must fail too (it enables SO_REUSEPORT by default).
    monkeypatch.setattr("goldfive.remote.server._in_use", lambda listen: False)
    first = await start_server(RunHost(tmp_path / "a.sqlite"), listen="127.0.0.1:0")
    try:
        with pytest.raises(ServeConfigError, match="cannot listen on"):
            second = await start_server(RunHost(tmp_path / "b.sqlite"), listen=first.address)
            await second.stop(None)
    finally:
        await first.stop(None)


def test_in_use_is_false_for_port_zero_and_a_free_port() -> None:
    assert not _in_use("127.0.0.1:0")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert not _in_use(f"127.0.0.1:{free}")


async def test_serve_command_on_a_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    first = await start_server(RunHost(tmp_path / "a.sqlite"), listen="127.0.0.1:0")
    env = dict(os.environ, GOLDFIVE_DATA_DIR=str(tmp_path / "data"))
    try:
        proc = await __import__("asyncio").create_subprocess_exec(
            sys.executable, "-m", "goldfive.cli", "serve", "--listen", first.address, "demo",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        out, err = await proc.communicate()
    finally:
        await first.stop(None)
    lines = [line for line in err.decode().splitlines() if line.strip()]
    assert proc.returncode == 2, err.decode()
    assert lines == [f"goldfive serve: error: cannot listen on {first.address}: the address is already in use (another goldfive serve?)"]
