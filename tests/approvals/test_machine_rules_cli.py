"""A rule saved for the machine ("always", scope machine) applies to runs the CLI starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from goldfive.approvals.rules import Rule, RuleBook
from goldfive.approvals.store import default_rules_path, save_rules

AGENT = '''
from goldfive.adapters.callable import CallableAdapter
from goldfive.run.user_tools import UserTool

def publish(target: str) -> dict:
    with open("published.txt", "a") as f:
        f.write(target + "\\n")
    return {"published": target}

async def _agent(task, session, tools):
    out = await tools["publish"](target=task.id)
    return str(out)

agent = CallableAdapter(_agent, tools=[UserTool(publish, requires_approval=True)])
'''


def _run(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "rules_agent.py").write_text(AGENT)
    (tmp_path / "plan.json").write_text(json.dumps({"summary": "one", "tasks": [{"id": "t1", "title": "publish it"}], "edges": []}))
    env = {**os.environ, "GOLDFIVE_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run(
        [sys.executable, "-m", "goldfive.cli", "run", "rules_agent:agent", "--goal", "publish", "--plan", "plan.json", "--headless"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )


def test_without_a_rule_a_headless_run_cannot_approve(tmp_path: Path) -> None:
    out = _run(tmp_path)
    assert not (tmp_path / "published.txt").exists(), out.stdout + out.stderr


def test_a_machine_rule_approves_the_call_in_a_cli_run(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path / "data"))
    path = default_rules_path()
    assert path == tmp_path / "data" / "approval_rules.json"
    save_rules(RuleBook("machine", [Rule("publish", author="tester")]), path)
    out = _run(tmp_path)
    assert (tmp_path / "published.txt").read_text() == "t1\n", out.stdout + out.stderr
