"""Several processes editing one machine rules file at the same moment (tests/rules_worker.py):
what the file holds after, against what the processes said they did."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from goldfive.approvals.rules import Rule, RuleBook
from goldfive.approvals.store import load_rules, save_rules
from tests.start_gate import StartGate

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class RulesRace:
    removed: set[str]
    #: id -> tool of every rule a process added.
    added: dict[str, str]
    #: Removed rules the file holds again.
    came_back: set[str]
    #: Added rules the file does not hold.
    lost: set[str]
    #: Ids handed to two different rules.
    reused: set[str]
    codes: list[int]
    stderr: list[str]


def race(tmp: Path, *, workers: int, initial: int, adds: int, seed: int, name: str = "rules") -> RulesRace:
    """``initial`` rules saved first (M1..), split among ``workers`` processes to remove, each
    also adding ``adds`` of its own; all started at one moment."""
    path = tmp / f"{name}.json"
    book = RuleBook("machine")
    for i in range(initial):
        book.add(Rule(f"seed-{i}", {}, scope="machine"))
    save_rules(book, path)
    ids = [r.id for r in book.rules()]
    gate = StartGate(tmp / f"{name}.go")
    procs = []
    try:
        for w in range(workers):
            mine = ",".join(ids[w::workers])
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "tests.rules_worker", str(gate.path), str(path), str(seed * 1000 + w), mine, str(adds)],
                cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            ))  # fmt: skip
        gate.release(procs)
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        gate.close()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    removed: set[str] = set()
    added: dict[str, str] = {}
    reused: set[str] = set()
    for out, _ in outs:
        for line in out.splitlines():
            word, *rest = line.split()
            if word == "removed":
                removed.add(rest[0])
            elif word == "added":
                if rest[0] in added or rest[0] in ids:
                    reused.add(rest[0])
                added[rest[0]] = rest[1]
    final = {r.id: r.tool for r in load_rules(path).rules()}
    return RulesRace(
        removed=removed,
        added=added,
        came_back={i for i in removed if i in final and final[i].startswith("seed-")},
        lost={i for i, tool in added.items() if final.get(i) != tool},
        reused=reused,
        codes=[p.returncode for p in procs],
        stderr=[err for _, err in outs],
    )
