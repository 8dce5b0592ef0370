"""Helpers of the hub tests: processes, polling, free ports."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from goldfive.testing import free_port, until  # noqa: F401  (the hub tests take them from here)

ROOT = Path(__file__).resolve().parents[2]


async def spawn(*args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GOLDFIVE_TOKEN", None)
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT, env=env
    )


async def read_until(proc: asyncio.subprocess.Process, prefix: str, timeout: float = 20.0) -> str:
    assert proc.stdout is not None
    async def read() -> str:
        assert proc.stdout is not None
        while True:
            line = (await proc.stdout.readline()).decode()
            if not line:
                err = (await proc.stderr.read()).decode() if proc.stderr is not None else ""
                raise AssertionError(f"process ended before {prefix!r}: {err[-2000:]}")
            if line.startswith(prefix):
                return line.strip()
    try:
        return await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        err = ""
        if proc.stderr is not None:
            try:
                err = (await asyncio.wait_for(proc.stderr.read(8192), 1)).decode()
            except TimeoutError:
                pass
        raise AssertionError(f"no line starting {prefix!r} within {timeout} s; its stderr so far: {err[-3000:]!r}") from None


async def ctl(*args: str) -> tuple[int, str, str]:
    proc = await spawn("goldfive.cli", "ctl", *args)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
async def reap():  # type: ignore[no-untyped-def]
    """Processes to kill (if still running) when the test ends."""
    procs: list[asyncio.subprocess.Process] = []
    yield procs
    for p in procs:
        if p.returncode is None:
            p.kill()
        await p.wait()
