"""StartRun imports the person's module off the hub's event loop: a module that takes a while
to import does not stall the hub for every other client. The hub is a real `goldfive serve`
process (in-process, a stalled loop would stall the test's clock too)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from goldfive.errors import RemoteError
from goldfive.remote import RemoteClient
from tests.hub.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
PLAN = '{"tasks": [{"id": "t1", "title": "one thing"}]}'
SLOW_MODULE = '''
import time
time.sleep(2.0)  # a heavy import (a framework, a model) as far as the hub can tell


async def agent(task, session):
    return "done"
'''


async def test_a_slow_import_in_start_run_does_not_stall_the_hub(tmp_path: Path) -> None:
    (tmp_path / "slow_import_agent.py").write_text(SLOW_MODULE)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GOLDFIVE_TOKEN", None)
    hub = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "goldfive.cli", "serve", "--listen", f"127.0.0.1:{port}", "--db", str(tmp_path / "runs.sqlite"),
        cwd=tmp_path, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    addr = f"127.0.0.1:{port}"
    try:
        async with RemoteClient(addr) as starter, RemoteClient(addr) as other:
            for _ in range(300):
                try:
                    await other.list_runs(timeout=1.0)
                    break
                except RemoteError:
                    await asyncio.sleep(0.1)
            starting = asyncio.create_task(starter.start_run("slow_import_agent:agent", goal="one thing", plan_json=PLAN))
            await asyncio.sleep(0.5)  # the import is under way
            t0 = time.perf_counter()
            await other.list_runs()
            answered = time.perf_counter() - t0
            run_id = await starting
            assert run_id
        assert answered < 1.0, f"ListRuns waited {answered:.2f} s behind the import"
    finally:
        hub.kill()
        await hub.wait()
