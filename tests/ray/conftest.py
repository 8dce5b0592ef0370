"""A real local multi-node Ray cluster (ray.cluster_utils.Cluster) and hubs placing runs on it.

One cluster for the whole test session (tests/ray's files run on one worker): a head that holds no run (``num_cpus=0``: the hubs are drivers
connected to it, so it cannot be removed) and two nodes offering ``agents``. A hub is
``goldfive serve --ray <cluster> --listen 127.0.0.1:0`` in its own process, working directory
``workdir`` (where MODULE:FUNCTION agents are imported from, by the hub and by the actors).
Everything started here is stopped in ``finally``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_RESOURCES = {"agents": 4}


def goldfive_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_DEDUP_LOGS": "0"}
    env.pop("GOLDFIVE_TOKEN", None)
    return env


@dataclass
class RayCluster:
    cluster: Any
    address: str

    def add_node(self) -> Any:
        return self.cluster.add_node(num_cpus=1, resources=dict(NODE_RESOURCES))

    def node_of(self, pid: int) -> Any:
        """The cluster node whose raylet started the worker process ``pid``."""
        ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        for node in self.cluster.list_all_nodes():
            raylets = node.all_processes.get("raylet", [])
            if any(p.process.pid == ppid for p in raylets):
                return node
        raise AssertionError(f"process {pid} (parent {ppid}) is not a worker of any node of the cluster")


def _children() -> set[int]:
    """The pids of this process's direct children (Ray's head and node processes are)."""
    me = str(os.getpid())
    pids = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            pids.add(int(stat.parent.name))
    return pids


def start_cluster(attempts: int = 3) -> RayCluster:
    """A head and two nodes. Ray gives a raylet a fixed 30 s to register with the GCS; on a
    loaded two-core machine (the other xdist worker starting Chromium or PostgreSQL) that has
    run out, so a start that fails is cleaned up and tried again, and the error says why."""
    from ray.cluster_utils import Cluster

    errors: list[str] = []
    for _ in range(attempts):
        before = _children()
        cluster = Cluster(initialize_head=False)
        try:
            cluster.add_node(num_cpus=0)
            rc = RayCluster(cluster, cluster.address)
            rc.add_node()
            rc.add_node()
            return rc
        except Exception as e:  # Ray raises a bare Exception for a node that timed out
            errors.append(f"{type(e).__name__}: {e}")
            try:
                cluster.shutdown()
            except Exception as e2:
                errors.append(f"while shutting it down: {type(e2).__name__}: {e2}")
            for pid in _children() - before:  # a node that failed half-way is in no list
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    raise RuntimeError(f"the Ray cluster did not start in {attempts} attempts: " + "; ".join(errors))


@pytest.fixture(scope="session")  # one per test process: a second Cluster started in an xdist worker after the first shut down timed out waiting for its GCS server
def ray_cluster() -> Iterator[RayCluster]:
    pytest.importorskip("ray")

    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT)  # the raylets' workers (the actors) import goldfive from here
    try:
        rc = start_cluster()
        try:
            yield rc
        finally:
            rc.cluster.shutdown()
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


@dataclass
class Hub:
    proc: subprocess.Popen[str]
    address: str
    stderr: list[str]
    #: The operator token's secret ("" for a hub without tokens).
    token: str = ""

    def ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        head = ("--token", self.token) if self.token else ()
        return ctl(self.address, *head, *args, timeout=timeout, cwd=None)


def ctl(address: str, *args: str, timeout: float = 60, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "goldfive.cli", "ctl", address, *args],
        capture_output=True, text=True, timeout=timeout, env=goldfive_env(), cwd=cwd or ROOT,
    )  # fmt: skip


def start_hub(cluster_address: str, workdir: Path, *extra: str, token: str = "", env: dict[str, str] | None = None) -> Hub:
    """``goldfive serve --ray`` in ``workdir``; ``token`` is its operator token (also given as
    ``--token``), ``env`` more environment for the hub process only (not for the actors)."""
    if token:
        extra = ("--token", token, *extra)
    proc = subprocess.Popen(
        [sys.executable, "-m", "goldfive.cli", "serve", "--ray", cluster_address, "--listen", "127.0.0.1:0",
         "--db", str(workdir / "hub.sqlite"), *extra],
        cwd=workdir, env={**goldfive_env(), **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:  # stderr read to its end, so the hub never blocks on a full pipe
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            m = re.search(r"listening on (\S+)", line)
            if m and not found:
                found.append(m.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(90) or not found:
        stop_hub(proc)
        raise AssertionError(f"the hub did not start: {''.join(lines)[-3000:]}")
    return Hub(proc, found[0], lines, token.partition("=")[2] or token)


def stop_hub(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {timeout}s")
        time.sleep(0.1)
