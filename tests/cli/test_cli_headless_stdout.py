"""``goldfive run --headless``: stdout is the run's lines, one per event; what the agent or its
framework prints while it runs (a banner, a debug line) goes to stderr, never between them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from goldfive.cli import main
from tests import noisy_agent


def test_a_print_in_the_middle_of_a_headless_run_goes_to_stderr(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(noisy_agent, "_said", False)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"summary": "g", "tasks": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}], "edges": []}))
    result = CliRunner().invoke(
        main,
        ["run", "tests.noisy_agent:agent", "--goal", "g", "--plan", str(plan), "--headless", "--db", str(tmp_path / "r.sqlite")],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines and all(re.match(r"^\s*\d+ [a-z_]+", line) for line in lines), lines  # only event lines
    assert "run_started" in lines[0] and "run_completed" in lines[-1]
    assert noisy_agent.BANNER in result.stderr
