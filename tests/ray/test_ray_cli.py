"""``goldfive serve --ray``'s bad input and an unreachable cluster: one line, exit 2."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner

from goldfive.cli import main
from tests.ray.conftest import ROOT, goldfive_env

pytest.importorskip("ray")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once the socket is closed


def test_serve_with_a_ray_cluster_that_cannot_be_reached_is_one_line_and_exit_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = _closed_port()
    out = subprocess.run(
        [sys.executable, "-m", "goldfive.cli", "serve", "--ray", f"127.0.0.1:{port}", "--listen", "127.0.0.1:0",
         "--db", str(tmp_path / "hub.sqlite")],
        capture_output=True, text=True, timeout=60, env=goldfive_env(), cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.strip() == f"goldfive serve: error: cannot reach the Ray cluster at 127.0.0.1:{port}: Connection refused"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--ray-resources", "{}"], "--ray-resources needs --ray ADDRESS|auto"),
        (["--advertise", "10.0.0.5:7531"], "--advertise needs --ray ADDRESS|auto"),
        (["--runs-per-actor", "5"], "--runs-per-actor needs --ray ADDRESS|auto"),
        (["--ray", "auto", "--runs-per-actor", "0"], "--runs-per-actor must be 1 or more, not 0"),
        (["--ray", "auto", "--ray-resources", "{num_cpus"], "--ray-resources is not JSON"),
        (["--ray", "auto", "--ray-resources", '{"cpus": 1}'], "unknown key 'cpus'; the keys are num_cpus, num_gpus, memory, resources"),
        (["--ray", "auto", "--ray-resources", '{"num_cpus": -1}'], "num_cpus must be a non-negative number, got -1"),
        (["--ray", "auto", "--ray-resources", '{"resources": {"agents": "many"}}'], "resources['agents'] must be a non-negative number"),
        (["--ray", "auto", "--ray-resources", '{"resources": {"CPU": 1}}'], "'CPU' is not a custom resource name"),
        (["--ray", "auto", "--advertise", "nohost"], "--advertise 'nohost' is not HOST:PORT"),
        (["--ray", "nohost"], "cannot reach the Ray cluster at nohost: 'nohost' is not HOST:PORT"),
    ],
)
def test_bad_ray_options_are_one_line_and_exit_2(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--listen", "127.0.0.1:0", *args])
    assert result.exit_code == 2, result.output
    assert needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
