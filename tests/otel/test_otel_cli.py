"""``--otel`` and ``--prices`` on the command line: the demo exports its trace to the endpoint the
OTEL_* variables name; a hub exports the runs it hosts and the runs connected to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.otel.receiver import HttpReceiver
from goldfive.testing import free_port as _free_port


def _env(rx: HttpReceiver, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=rx.endpoint, OTEL_SERVICE_NAME="goldfive-cli-test", GOLDFIVE_DATA_DIR=str(tmp_path))
    return env


def test_demo_headless_with_otel_exports_its_trace(tmp_path: Path) -> None:
    with HttpReceiver() as rx:
        out = subprocess.run([sys.executable, "-m", "goldfive.cli", "demo", "--headless", "--speed", "40", "--otel"],
                             env=_env(rx, tmp_path), capture_output=True, text=True, timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stderr
    [root] = rx.named("invoke_workflow")
    assert root.resource["service.name"] == "goldfive-cli-test"
    assert len(rx.named("invoke_agent")) == 5 and rx.named("chat scripted")


def test_a_prices_file_prices_the_demo_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"scripted": {"input": 1000, "output": 1000}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run([sys.executable, "-m", "goldfive.cli", "demo", "--headless", "--speed", "40", "--prices", str(prices)],
                         env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    usage = [line for line in out.stdout.splitlines() if "usage_recorded" in line]
    assert usage and all("scripted" in line for line in usage)
    assert any("$0." in line or "$1" in line for line in usage)  # at $1000 per million tokens, cents per call
    prices.write_text("{")
    bad = subprocess.run([sys.executable, "-m", "goldfive.cli", "demo", "--headless", "--prices", str(prices)],
                         env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "is not JSON" in bad.stderr


async def test_a_hub_with_otel_exports_its_hosted_run_and_a_connected_one(tmp_path: Path) -> None:
    from goldfive.planners.static import StaticPlanner
    from goldfive.runner import Runner
    from goldfive.types import Plan, Session, Task
    from goldfive.usage import ModelUsage, report_usage

    addr = f"127.0.0.1:{_free_port()}"
    with HttpReceiver() as rx:
        hub = subprocess.Popen([sys.executable, "-m", "goldfive.cli", "serve", "demo", "--speed", "40", "--listen", addr,
                                "--db", str(tmp_path / "hub.sqlite"), "--otel"],
                               env=_env(rx, tmp_path), stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert hub.stderr is not None and "listening on" in hub.stderr.readline()

            async def agent(task: Task, session: Session) -> str:
                await report_usage(ModelUsage("gpt-4o-mini", 100, 10, source="test"), session=session)
                return "ok"

            runner = Runner(agent=agent, planner=StaticPlanner(Plan([Task("a", "A")])), hub=addr, run_id="connected-run")
            try:
                assert (await runner.run("connected")).success
            finally:
                await runner.close()
            deadline = time.monotonic() + 60
            # the connected run ended: its trace is out; the hosted demo waits for its approval,
            # and its open spans go out when the hub stops
            while time.monotonic() < deadline and not any(r.attrs.get("gen_ai.conversation.id") == "connected-run" for r in rx.named("invoke_workflow")):
                time.sleep(0.2)
        finally:
            hub.terminate()
            hub.wait(30)
    roots = {r.attrs["gen_ai.conversation.id"]: r for r in rx.named("invoke_workflow")}
    assert "connected-run" in roots and len(roots) == 2
    connected = [s for s in rx.named("chat gpt-4o-mini") if s.span.trace_id == roots["connected-run"].span.trace_id]
    assert connected and connected[0].attrs["gen_ai.usage.input_tokens"] == 100
