"""Runs placed on a local Ray cluster through the hub (issue 16, part 3): how long until a burst
of runs is running, and what each costs the hub.

Run: python bench/bench_ray_fleet.py [--runs 20] [--passes 3] [--nodes 2] [--speed 0.2] [--runs-per-actor 50] [--no-single]

A local multi-node cluster (``ray.cluster_utils.Cluster``: a head that holds no run and
``--nodes`` nodes) is started in this process. Each pass starts a fresh hub
(``goldfive serve --ray <cluster>`` in its own process, SQLite in a temp dir), sends ``--runs``
StartRun calls at once (``demo`` at ``--speed``, slow enough that every run is still going when
the last one starts), and measures the time from the first StartRun to every run RUNNING and
connected from its actor, the hub's RSS growth per run, and the RSS of the actors' worker
processes per run. The hub is then stopped (its actors end with its Ray job).

Baseline, measured in the same run: the same burst against a hub without ``--ray``, which hosts
the runs in its own process. Placed runs are measured one per actor process (unless
``--no-single``) and ``--runs-per-actor`` to a process (``serve --runs-per-actor``). A warm-up pass of each (a few runs) goes first; figures are the
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
                if b"RunActor" in cmd or b"RunPool" in cmd:  # Ray retitles an actor's worker process "ray::RunActor..."
                    pids.append(child)
    return pids


def start_hub(workdir: Path, ray_address: str | None, per_actor: int = 1) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GOLDFIVE_TOKEN", None)
    args = [sys.executable, "-m", "goldfive.cli", "serve", "--listen", "127.0.0.1:0", "--db", str(workdir / "hub.sqlite")]
    if ray_address:
        args += ["--ray", ray_address, "--runs-per-actor", str(per_actor)]
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


def one_pass(n: int, speed: float, cluster: Any, placed: bool, per_actor: int = 1) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        proc, address = start_hub(Path(tmp), cluster.address if placed else None, per_actor)
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
    ap.add_argument("--runs-per-actor", type=int, default=50, help="runs sharing one actor process in the pooled passes")
    ap.add_argument("--no-single", action="store_true", help="skip the one-run-per-process passes (they do not fit 1,000 runs here)")
    args = ap.parse_args()

    os.environ["PYTHONPATH"] = str(ROOT)  # the actors import goldfive from this tree
    from ray.cluster_utils import Cluster

    t = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    per = args.runs_per_actor
    try:
        for _ in range(args.nodes):
            # Logical CPUs, enough for every actor (each asks 0.1) and not many more: Ray starts
            # idle workers ahead for a node's CPUs, which would be warm-up the baseline lacks.
            cluster.add_node(num_cpus=max(1, math.ceil(args.runs * 0.1 / args.nodes) + 1))
        print(f"cluster: head + {args.nodes} nodes up in {time.perf_counter() - t:.1f} s; {os.cpu_count()} cores")
        warm = min(4, args.runs)
        one_pass(warm, args.speed, cluster, placed=False)
        one_pass(warm, args.speed, cluster, placed=True, per_actor=min(per, warm))
        hosted = [one_pass(args.runs, args.speed, cluster, placed=False) for _ in range(args.passes)]
        single = [] if args.no_single else [one_pass(args.runs, args.speed, cluster, placed=True) for _ in range(args.passes)]
        pooled = [one_pass(args.runs, args.speed, cluster, placed=True, per_actor=per) for _ in range(args.passes)]
    finally:
        cluster.shutdown()

    n = args.runs
    h_s, h_kb = median(hosted, "seconds"), median(hosted, "hub_kb")
    columns = [("hosted in hub", hosted), *([("Ray, 1 per actor", single)] if single else []), (f"Ray, {per} per actor", pooled)]
    print(f"\n{n} runs started at once, median of {args.passes} passes (after a warm-up of {warm}); ratios to hosted")
    print(f"{'':34}" + "".join(f"{name:>22}" for name, _ in columns))

    def row(label: str, key: str, scale: float = 1.0, ratio: bool = True, base: float = 1.0) -> None:
        cells = []
        for name, passes in columns:
            v = median(passes, key) * scale
            cells.append(f"{v:12.1f}" + (f" ({v / base:5.1f}x)" if ratio and base > 0 and name != "hosted in hub" else " " * 9))
        print(f"{label:34}" + "".join(f"{c:>22}" for c in cells))

    row("time to all running (s)", "seconds", base=h_s)
    row("per run, to running (ms)", "seconds", scale=1000 / n, base=h_s * 1000 / n)
    row("hub RSS per run (KB)", "hub_kb", base=h_kb)
    row("actor RSS per run (MB)", "actor_kb", scale=1 / 1024, ratio=False)
    row("actor RSS, all runs (GB)", "actor_kb", scale=n / 1024 / 1024, ratio=False)
    for name, passes in columns[1:]:
        print(f"{name}: actors per pass {[int(p['actors']) for p in passes]}; passes (s) " + ", ".join(f"{p['seconds']:.2f}" for p in passes))
    print("hosted passes (s): " + ", ".join(f"{p['seconds']:.2f}" for p in hosted))


if __name__ == "__main__":
    main()
