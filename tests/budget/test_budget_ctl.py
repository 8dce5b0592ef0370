"""``ctl start --budget`` and ``ctl budget`` over a real hub: the run pauses at its budget and
needs a person, RESUME alone is refused, BUDGET --resume raises it and the run goes on."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from goldfive.testing import ctl, until_sync
from tests.hub.test_hub_server import PLAN, Hub, _runs

AGENT = """
from goldfive.run import current
from goldfive.usage import ModelUsage, report_usage

async def agent(task, session):
    assert not current().budget.budget.empty  # ctl start --budget: the run starts with it
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


SPENDER = """
from goldfive.usage import ModelUsage, report_usage

async def agent(task, session):
    await report_usage(ModelUsage("gpt-4o", 900, 100, source="test"), session=session, task_id=task.id)
    return task.id
"""


def test_ctl_start_budget_is_the_runs_own_from_its_start_the_hub_default_never_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve --budget (the process default) and ctl start --budget: the run starts with the
    person's budget alone; no default limit the person did not name stays on it (issue 25)."""
    from goldfive.budget import Budget
    from goldfive.run.defaults import RunDefaults, install_run_defaults, run_defaults

    monkeypatch.chdir(tmp_path)
    name = f"budget_spender_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(SPENDER, encoding="utf-8")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")
    before = run_defaults()
    install_run_defaults(RunDefaults(budget=Budget(tokens=100, model_calls=1)))  # serve --budget tokens=100,model_calls=1
    hub = Hub(tmp_path / "runs.sqlite")
    try:
        none = ctl(hub.addr, "start", f"{name}:agent", "--goal", "g", "--plan", str(plan), "--budget", "usd=none")
        assert none.exit_code == 2 and "sets no limit" in none.output
        started = ctl(hub.addr, "start", f"{name}:agent", "--goal", "two steps", "--plan", str(plan), "--budget", "tokens=1000")
        assert started.exit_code == 0, started.output
        run_id = started.output.strip()
        row = until_sync(lambda: (r := _runs(hub.addr)[run_id]) and r.get("needs_you", "").startswith("budget") and r, "the budget to pause it")
        assert row["needs_you"] == "budget reached, tokens 1,000 of 1,000"  # not model_calls 1 of 1: the default is not its
        run = hub.host.get(run_id)
        assert run is not None
        evs = run.events_after(-1)
        kinds = [e.WhichOneof("payload") for e in evs]
        assert kinds[:2] == ["run_started", "budget_changed"]  # its budget before anything ran
        changes = [(e.budget_changed.detail, e.budget_changed.author) for e in evs if e.WhichOneof("payload") == "budget_changed"]
        assert changes == [("tokens 1,000", "operator")]
        assert "BUDGET" not in {e.control_received.kind for e in evs if e.WhichOneof("payload") == "control_received"}
        registered = hub.call(hub.host.registry.all())[run_id]
        assert registered.launch is not None and registered.launch.budget == "tokens=1000"  # the launch the hub recorded
    finally:
        hub.stop()
        install_run_defaults(before)


def test_a_start_with_a_budget_that_does_not_read_is_refused_in_one_line() -> None:
    from goldfive.inputs import InputError
    from goldfive.remote.launch import start_spec

    with pytest.raises(InputError, match="the run's budget: budget tokens=lots: not a number"):
        start_spec("demo", "", "", 1.0, budget="tokens=lots")
    assert start_spec("demo", "", "", 1.0, budget="usd=2").spec.budget == "usd=2"  # type: ignore[union-attr]
    assert start_spec("demo", "", "", 1.0).spec.budget == ""  # type: ignore[union-attr]


def test_a_placed_runs_budget_from_its_start_is_its_own_not_the_hubs_default(tmp_path: Path) -> None:
    """What a Ray actor runs (goldfive.placement.actor.run_placed), without Ray: the spec's
    budget is the run's from its start, so the hub's serve --budget default never reaches it."""
    import asyncio

    from goldfive.budget import Budget
    from goldfive.hub.connected import DEFAULT_BUDGET_AUTHOR
    from goldfive.placement.actor import run_placed
    from goldfive.placement.spec import PlacedSpec

    name = f"budget_placed_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(SPENDER, encoding="utf-8")
    hub = Hub(tmp_path / "runs.sqlite", default_budget=Budget(tokens=100, model_calls=1))
    try:
        from goldfive.placement.pending import PlacedRun

        hub_service = hub.server.extra[0]
        hub.host.adopt(PlacedRun("placed-b1", hub_service.recorder, goal_summary="two steps").run)  # as the placer does
        spec = PlacedSpec(run_id="placed-b1", hub=hub.addr, agent=f"{name}:agent", goal="two steps", plan_json=json.dumps(PLAN),
                          search_dir=str(tmp_path), budget="tokens=5000", budget_author="alice")  # fmt: skip
        assert asyncio.run(run_placed(spec)) == "completed"  # 2,000 tokens: within its own 5,000
        run = hub.host.get("placed-b1")
        assert run is not None
        changes = [(e.budget_changed.detail, e.budget_changed.author) for e in run.events_after(-1) if e.WhichOneof("payload") == "budget_changed"]
        assert changes == [("tokens 5,000", "alice")] and DEFAULT_BUDGET_AUTHOR not in {a for _, a in changes}
    finally:
        hub.stop()
