"""An agent that prints as some frameworks do (PydanticAI's banner, a debug print): once at
its first call, in the middle of the run (tests/cli/test_cli_headless_stdout.py)."""

from __future__ import annotations

from typing import Any

BANNER = "NOISY FRAMEWORK v9 (a banner printed on first use)"
_said = False


async def agent(task: Any, session: Any, tools: Any) -> str:
    global _said
    if not _said:
        _said = True
        print(BANNER)
    return f"{task.title}: done"
