"""What a hub hosts: the factories of runs started by ``goldfive serve TARGET`` and by
``Runs.StartRun`` (``goldfive ctl ADDR start ...``), and rebuilding them from a recorded launch.

A factory is called as ``factory(sinks=..., control=..., run_id=...)`` and returns a Runner;
each Runner records its ``launch`` so ``serve`` can resume the run after a restart. Every
problem with what was asked (an agent that cannot be imported, a plan that does not parse, no
planner) is an :class:`~goldfive.cli.inputs.InputError` whose message is one line.
"""

from __future__ import annotations

import os
from typing import Any

from goldfive.errors import GoldfiveError

__all__ = ["agent_run", "demo_run", "resume_with", "start_spec"]

#: A run to host: (factory, the run's user input).
Launch = tuple[Any, str]


def demo_run(speed: float) -> Launch:
    """The offline slide-deck demo at ``speed``."""
    from goldfive.demo import DEMO_GOAL, make_demo_runner

    if speed <= 0:
        from goldfive.cli.inputs import InputError

        raise InputError(f"the demo's speed must be positive, got {speed}")

    def factory(*, sinks: Any, control: Any, run_id: str) -> Any:
        runner = make_demo_runner(sinks=sinks, control=control, speed=speed, run_id=run_id)
        runner.launch = {"command": "serve", "target": "demo", "speed": speed}  # to resume it after a restart
        return runner

    return factory, DEMO_GOAL


def agent_run(
    spec: str,
    goal: str,
    plan_path: str | None,
    base_url: str | None,
    model: str | None,
    *,
    search_dir: str | None = None,
    plan_json: str | None = None,
) -> Launch:
    """The user's agent ``MODULE:FUNCTION`` (importable from ``search_dir``, default the
    current directory) working on ``goal``, planned from ``plan_path`` or ``plan_json`` (plan
    JSON as text), else by the LLM planner (``base_url``/``model`` or the environment)."""
    from goldfive.cli.inputs import InputError, load_agent, make_planner, parse_plan_text

    if not goal or not goal.strip():
        raise InputError("MODULE:FUNCTION needs a goal: say what the run should achieve")
    agent = load_agent(spec, search_dir=search_dir)
    launch = {
        "command": "serve", "target": spec, "goal": goal, "plan": os.path.abspath(plan_path) if plan_path else None,
        "plan_json": plan_json or None, "base_url": base_url, "model": model,
        "cwd": os.path.abspath(search_dir or os.getcwd()),
    }  # fmt: skip
    if plan_json:
        from goldfive.planners.static import StaticPlanner

        planner: Any = StaticPlanner(parse_plan_text(plan_json, "the plan JSON"))
    else:
        planner = make_planner(plan_path, base_url, model, None).planner

    def factory(*, sinks: Any, control: Any, run_id: str) -> Any:
        from goldfive.adapters.frameworks import adapter_for
        from goldfive.goals import PassthroughGoalDeriver
        from goldfive.run.config import RuntimeConfig
        from goldfive.runner import Runner

        return Runner(
            agent=adapter_for(agent),
            planner=planner,
            goal_deriver=PassthroughGoalDeriver(goal),
            sinks=sinks,
            control=control,
            run_id=run_id,
            launch=launch,
            config=RuntimeConfig(use_machine_rules=True),  # rules saved for this machine (the hub's) apply
        )

    return factory, goal


def start_spec(agent: str, goal: str, plan_json: str, speed: float, *, search_dir: str | None = None) -> Launch:
    """A StartRun request's run: ``"demo"`` (with ``speed``, 0 = 1) or ``MODULE:FUNCTION``
    importable by this process (from ``search_dir``, default the current directory) with
    ``goal`` and an optional plan. InputError says why not."""
    from goldfive.cli.inputs import InputError

    agent = agent.strip()
    if agent == "demo":
        return demo_run(speed or 1.0)
    if not agent:
        raise InputError("no agent: give 'demo' or MODULE:FUNCTION")
    try:
        return agent_run(agent, goal, None, None, None, search_dir=search_dir, plan_json=plan_json or None)
    except InputError:
        raise
    except GoldfiveError as exc:  # e.g. a framework adapter that cannot wrap the object
        raise InputError(str(exc)) from None


def resume_with(launch: dict[str, Any]) -> Any:
    """The factory that builds a hosted run again from its recorded launch; None for runs
    serve did not start (``goldfive run`` ones are resumed with ``goldfive resume``)."""
    if launch.get("command") != "serve":
        return None
    if launch.get("target") == "demo":
        return demo_run(float(launch.get("speed", 1.0)))[0]
    target = str(launch.get("target", ""))
    return agent_run(
        target, str(launch.get("goal", "")), launch.get("plan"), launch.get("base_url"), launch.get("model"),
        search_dir=launch.get("cwd"), plan_json=launch.get("plan_json"),
    )[0]  # fmt: skip
