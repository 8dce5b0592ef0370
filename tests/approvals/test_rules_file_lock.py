"""The machine's saved approval rules edited by several processes at once (a hub and local
runs sharing a data directory): no removed rule comes back, no added rule is lost, no id is
given twice."""

from __future__ import annotations

from pathlib import Path

from tests.rules_race import race


def test_rules_edited_by_four_processes_at_once_keep_every_edit(tmp_path: Path) -> None:
    r = race(tmp_path, workers=4, initial=60, adds=15, seed=20261130)
    assert r.codes == [0, 0, 0, 0], r.stderr
    problems = {"came back": sorted(r.came_back), "lost": sorted(r.lost), "ids given twice": sorted(r.reused)}
    assert not any(problems.values()), {k: f"{len(v)}: {v[:8]}" for k, v in problems.items()}
    assert len(r.removed) == 60 and len(r.added) == 60
