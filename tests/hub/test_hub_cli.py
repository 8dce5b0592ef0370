"""``goldfive run ... --hub ADDR`` and ``serve --interrupt-after``: from the command line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldfive.cli import main
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.sinks import list_runs, replay_from_sqlite
from tests.hub.conftest import ROOT

PLAN = {
    "summary": "two steps",
    "tasks": [{"id": "fetch", "title": "Fetch"}, {"id": "report", "title": "Report"}],
    "edges": [{"from_task_id": "fetch", "to_task_id": "report"}],
}


async def test_goldfive_run_with_hub_registers_the_run_and_the_hub_holds_the_same_history(tmp_path: Path) -> None:
    (tmp_path / "hubagents.py").write_text("async def agent(task, session):\n    return f'did {task.id}'\n")
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    server = await start_server(RunHost(tmp_path / "hub.sqlite"), listen="127.0.0.1:0")
    local = tmp_path / "local.sqlite"
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "GOLDFIVE_DATA_DIR": str(tmp_path / "data")}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "goldfive.cli", "run", "hubagents:agent", "--goal", "ship it", "--plan", "plan.json",
            "--headless", "--db", str(local), "--hub", server.address,
            cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        (run_id,) = [r.run_id for r in list_runs(local)]
        async with RemoteClient(server.address) as client:
            snap = await client.get_run(run_id)
        assert snap.summary.state == "COMPLETED" and snap.summary.tasks_total == 2
        (run,) = server.host.runs()
        assert (run.origin, run.pid, run.connection) == ("connected", proc.pid, "disconnected")
        mine = [(e.sequence, e.event_id) for e in replay_from_sqlite(local, run_id)]
        assert [(e.sequence, e.event_id) for e in run.events_after(-1)] == mine
    finally:
        await server.stop(None)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--hub", "nohost"], "not HOST:PORT"),
        (["--hub", "127.0.0.1:99999"], "not HOST:PORT"),
        (["--hub-token", "x" * 20], "go with --hub"),
        (["--hub", "127.0.0.1:7531", "--hub-tls-ca", "missing.pem"], "no such file"),
    ],
)
def test_a_bad_hub_option_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], needle: str) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["run", "nomod:agent", "--goal", "g", *args])
    assert result.exit_code == 2 and needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_serve_refuses_an_interrupt_timeout_that_is_not_positive() -> None:
    result = CliRunner().invoke(main, ["serve", "--interrupt-after", "0"])
    assert result.exit_code == 2 and "--interrupt-after must be a positive" in result.stderr
