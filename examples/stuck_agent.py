"""An agent that gets stuck: it calls ``deploy`` with the same arguments until it gives up.

    goldfive run examples.stuck_agent:agent --goal "ship 1.2" --plan examples/stuck_plan.json --headless

The watchdog sees the same call again and again: a warning with the calls as evidence, then a
nudge into the turn (the agent prints it), then a pause for a person (headless nobody can
answer, so the run stops there)."""

from __future__ import annotations

from typing import Any

import goldfive
from goldfive.run.user_tools import UserTool


def deploy(service: str, version: str) -> dict[str, Any]:
    """Deploy a service version (the registry is down: it always fails)."""
    return {"ok": False, "error": "registry timeout"}


async def _agent(task: Any, session: Any, tools: dict[str, Any]) -> str:
    for _ in range(20):
        await tools["deploy"](service="api", version="1.2")
        for note in await goldfive.read_injected(session, task.id):
            print(f"agent was told: {note}", flush=True)
    return "gave up"


agent = goldfive.CallableAdapter(_agent, tools=[UserTool(deploy)])
