"""A tiny agent for `goldfive run`:

    goldfive run examples.hello_agent:agent --goal "write a haiku" --plan examples/hello_plan.json
"""

import asyncio

DELAY_S = 1.0  # seconds per task, so there is time to press keys


async def agent(task, session, tools):
    await tools["report_task_progress"](detail=f"thinking about {task.title}")
    await asyncio.sleep(DELAY_S)
    return f"{task.title}: done"
