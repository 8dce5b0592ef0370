"""``ctl start --budget`` and ``ctl budget`` over a real hub: the run pauses at its budget and
needs a person, RESUME alone is refused, BUDGET --resume raises it and the run goes on."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from goldfive.testing import ctl, until_sync
from tests.test_hub_server import PLAN, Hub, _runs

AGENT = """
import asyncio
from goldfive.run import current
from goldfive.usage import ModelUsage, report_usage

async def agent(task, session):
    while current().budget.budget.empty:  # the budget comes in a BUDGET control right after the start
        await asyncio.sleep(0.01)
    await report_usage(ModelUsage("gpt-4o", 900, 100, source="test"), session=session, task_id=task.id)
    return task.id
"""


def test_ctl_budget_raises_a_paused_runs_budget_over_a_real_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    name = f"budget_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(AGENT, encoding="utf-8")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")
    hub = Hub(tmp_path / "runs.sqlite")
    try:
        bad = ctl(hub.addr, "start", f"{name}:agent", "--goal", "two steps", "--plan", str(plan), "--budget", "tokens=lots")
        assert bad.exit_code == 2 and "budget tokens=lots: not a number" in bad.output
        started = ctl(hub.addr, "start", f"{name}:agent", "--goal", "two steps", "--plan", str(plan), "--budget", "tokens=1000")
        assert started.exit_code == 0, started.output
        run = started.output.strip()
        row = until_sync(lambda: (r := _runs(hub.addr)[run]) and r.get("needs_you", "").startswith("budget") and r, "the budget to pause it")
        assert row["needs_you"] == "budget reached, tokens 1,000 of 1,000"
        assert row["state"] in ("PAUSING", "PAUSED") and row["tasks_completed"] <= 1
        status = ctl(hub.addr, "status", run)
        assert "needs you: budget reached, tokens 1,000 of 1,000" in status.output
        assert "budget: tokens 1,000 of 1,000" in status.output, status.output

        refused = ctl(hub.addr, "resume", run)
        assert refused.exit_code == 1 and "budget reached, tokens 1,000 of 1,000: raise it with BUDGET first" in refused.output
        wrong = ctl(hub.addr, "budget", run, "tokens=5000,dollars=3")
        assert wrong.exit_code == 2 and "unknown limit 'dollars'" in wrong.output
        raised = ctl(hub.addr, "budget", run, "tokens=5000", "--resume")
        assert raised.exit_code == 0 and raised.output.startswith("BUDGET SUCCESS: budget set: tokens 5,000; resumed"), raised.output
        done = until_sync(lambda: (r := _runs(hub.addr)[run]) and r["state"] == "COMPLETED" and r, "the run to complete")
        assert done["tasks_completed"] == 2 and not done.get("needs_you")
    finally:
        hub.stop()
