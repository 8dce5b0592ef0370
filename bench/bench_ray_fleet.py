"""Runs placed on a local Ray cluster through the hub (issue 16, part 3): how long until a burst
of runs is running, and what each costs the hub.

Run: python bench/bench_ray_fleet.py [--runs 20] [--passes 3] [--nodes 2] [--speed 0.2]

A local multi-node cluster (``ray.cluster_utils.Cluster``: a head that holds no run and
``--nodes`` nodes) is started in this process. Each pass starts a fresh hub
(``goldfive serve --ray <cluster>`` in its own process, SQLite in a temp dir), sends ``--runs``
StartRun calls at once (``demo`` at ``--speed``, slow enough that every run is still going when
the last one starts), and measures the time from the first StartRun to every run RUNNING and
connected from its actor, the hub's RSS growth per run, and the RSS of the actors' worker
processes per run. The hub is then stopped (its actors end with its Ray job).

Baseline, measured in the same run: the same burst against a hub without ``--ray``, which hosts
the runs in its own process. A warm-up pass of each (a few runs) goes first; figures are the
median over ``--passes`` and are printed as ratios to the baseline. Nothing passes or fails.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goldfive.link.client import RemoteClient  # noqa: E402


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def workers(cluster: Any) -> list[int]:
    """The worker processes of the cluster's raylets (each actor is one)."""
    pids = []
    for node in cluster.list_all_nodes():
        for proc in node.all_processes.get("raylet", []):
            for child in children(proc.process.pid):
                try:
                    cmd = Path(f"/proc/{child}/cmdline").read_bytes()
                except OSError:
                    continue
                if b"RunActor" in cmd:  # Ray retitles an actor's worker process "ray::RunActor..."
                    pids.append(child)
    return pids


def start_hub(workdir: Path, ray_address: str | None) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GOLDFIVE_TOKEN", None)
    args = [sys.executable, "-m", "goldfive.cli", "serve", "--listen", "127.0.0.1:0", "--db", str(workdir / "hub.sqlite")]
    if ray_address:
        args += ["--ray", ray_address]
    proc = subprocess.Popen(args, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            m = re.search(r"listening on (\S+)", line)
            if m and not found:
                found.append(m.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(120) or not found:
        proc.kill()
        raise SystemExit("the hub did not start")
    return proc, found[0]


def stop_hub(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def burst(address: str, n: int, speed: float, placed: bool) -> float:
    """Start ``n`` demo runs at once; seconds from the first StartRun to all running."""
    async with RemoteClient(address) as client:
        t0 = time.perf_counter()
        ids = await asyncio.gather(*(client.start_run("demo", speed=speed, timeout=300) for _ in range(n)))
        want = set(ids)
        while True:
            rows = await client.list_runs()
            running = {
                r.run_id for r in rows
                if r.run_id in want and r.state == "RUNNING" and (not placed or r.connection == "connected")
            }  # fmt: skip
            if running == want:
                return time.perf_counter() - t0
            if time.perf_counter() - t0 > 900:
                raise SystemExit(f"only {len(running)}/{n} runs running after 900 s")
            await asyncio.sleep(0.1)


def one_pass(n: int, speed: float, cluster: Any, placed: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        proc, address = start_hub(Path(tmp), cluster.address if placed else None)
        try:
            time.sleep(0.5)
            before = rss_kb(proc.pid)
            workers_before = set(workers(cluster))
            seconds = asyncio.run(burst(address, n, speed, placed))
            time.sleep(0.5)
            hub_kb = (rss_kb(proc.pid) - before) / n
            actors = [pid for pid in workers(cluster) if pid not in workers_before]
            actor_kb = sum(rss_kb(pid) for pid in actors) / n if placed else 0.0
        finally:
            stop_hub(proc)
    if placed:  # the actors end with the hub's Ray job: wait until their processes are gone
        end = time.monotonic() + 120
        while time.monotonic() < end and len(workers(cluster)) > len(workers_before):
            time.sleep(0.5)
    return {"seconds": seconds, "hub_kb": hub_kb, "actor_kb": actor_kb, "actors": float(len(actors) if placed else 0)}


def median(passes: list[dict[str, float]], key: str) -> float:
    return statistics.median(p[key] for p in passes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--speed", type=float, default=0.2, help="demo pace: slow, so runs are still going when measured")
    args = ap.parse_args()

    os.environ["PYTHONPATH"] = str(ROOT)  # the actors import goldfive from this tree
    from ray.cluster_utils import Cluster

    t = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        for _ in range(args.nodes):
            # Logical CPUs, enough for every run (each asks 0.1) and not many more: Ray starts
            # idle workers ahead for a node's CPUs, which would be warm-up the baseline lacks.
            cluster.add_node(num_cpus=max(1, math.ceil(args.runs * 0.1 / args.nodes) + 1))
        print(f"cluster: head + {args.nodes} nodes up in {time.perf_counter() - t:.1f} s; {os.cpu_count()} cores")
        warm = min(4, args.runs)
        one_pass(warm, args.speed, cluster, placed=False)
        one_pass(warm, args.speed, cluster, placed=True)
        hosted = [one_pass(args.runs, args.speed, cluster, placed=False) for _ in range(args.passes)]
        ray_passes = [one_pass(args.runs, args.speed, cluster, placed=True) for _ in range(args.passes)]
    finally:
        cluster.shutdown()

    n = args.runs
    h_s, r_s = median(hosted, "seconds"), median(ray_passes, "seconds")
    h_kb, r_kb = median(hosted, "hub_kb"), median(ray_passes, "hub_kb")
    a_kb = median(ray_passes, "actor_kb")
    print(f"\n{n} runs started at once, median of {args.passes} passes (after a warm-up of {warm})")
    print(f"{'':34}{'hosted in hub':>16}{'placed on Ray':>16}{'ratio':>8}")
    print(f"{'time to all running (s)':34}{h_s:16.2f}{r_s:16.2f}{r_s / h_s:8.1f}x")
    print(f"{'per run, to running (ms)':34}{h_s / n * 1000:16.1f}{r_s / n * 1000:16.1f}")
    print(f"{'hub RSS per run (KB)':34}{h_kb:16.0f}{r_kb:16.0f}{(r_kb / h_kb if h_kb > 0 else float('nan')):8.2f}x")
    print(f"{'actor process RSS per run (MB)':34}{'-':>16}{a_kb / 1024:16.0f}")
    print(f"actors seen per pass: {[int(p['actors']) for p in ray_passes]}")
    print("passes (s): hosted " + ", ".join(f"{p['seconds']:.2f}" for p in hosted)
          + "; ray " + ", ".join(f"{p['seconds']:.2f}" for p in ray_passes))  # fmt: skip


if __name__ == "__main__":
    main()
