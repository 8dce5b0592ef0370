"""What a hub hosts: the factories of runs started by ``goldfive serve TARGET`` and by
``Runs.StartRun`` (``goldfive ctl ADDR start ...``), and building them again from the hub's own
launch record.

A factory is called as ``factory(sinks=..., control=..., run_id=...)`` and returns a Runner.
Each :class:`Launch` carries the :class:`~goldfive.store.registry.LaunchSpec` the hub records
when it starts the run (its registry, never the run's events): after a restart the hub builds
the run again from that record alone, importing the agent from its own search directory, never
from a directory a record names. Every problem with what was asked (an agent that cannot be
imported, a plan that does not parse, no planner) is an
:class:`~goldfive.inputs.InputError` whose message is one line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from goldfive.errors import GoldfiveError
from goldfive.store.registry import LaunchSpec

__all__ = ["Launch", "agent_run", "demo_run", "resume_with", "start_spec", "with_budget"]


class Launch(NamedTuple):
    """A run to host: its factory, the run's user input, and what the hub records to build
    it again (None: the run is not continued after a restart)."""

    factory: Any
    user_input: str
    spec: LaunchSpec | None = None


def demo_run(speed: float) -> Launch:
    """The offline slide-deck demo at ``speed``."""
    from goldfive.demo import DEMO_GOAL, make_demo_runner

    if speed <= 0:
        from goldfive.inputs import InputError

        raise InputError(f"the demo's speed must be positive, got {speed}")

    def factory(*, sinks: Any, control: Any, run_id: str) -> Any:
        return make_demo_runner(sinks=sinks, control=control, speed=speed, run_id=run_id)

    return Launch(factory, DEMO_GOAL, LaunchSpec("demo", speed=speed))


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
    from goldfive.inputs import InputError, load_agent, make_planner, parse_plan_text

    if not goal or not goal.strip():
        raise InputError("MODULE:FUNCTION needs a goal: say what the run should achieve")
    agent = load_agent(spec, search_dir=search_dir)
    if plan_json:
        from goldfive.planners.static import StaticPlanner

        planner: Any = StaticPlanner(parse_plan_text(plan_json, "the plan JSON"))
    else:
        planner = make_planner(plan_path, base_url, model, None).planner
        if plan_path:  # the plan itself is recorded, not where it was: a file can change
            plan_json = Path(plan_path).read_text(encoding="utf-8")
    launch = LaunchSpec(
        spec, goal=goal, plan_json=plan_json or "", base_url=base_url or "", model=model or "",
        cwd=os.path.abspath(search_dir or os.getcwd()),
    )  # fmt: skip

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
            config=RuntimeConfig(use_machine_rules=True),  # rules saved for this machine (the hub's) apply
        )

    return Launch(factory, goal, launch)


def start_spec(
    agent: str, goal: str, plan_json: str, speed: float, *, search_dir: str | None = None, budget: str = "", budget_author: str = ""
) -> Launch:
    """A StartRun request's run: ``"demo"`` (with ``speed``, 0 = 1) or ``MODULE:FUNCTION``
    importable by this process (from ``search_dir``, default the current directory) with
    ``goal`` and an optional plan. ``budget`` ("tokens=50000,usd=2", as ``--budget`` reads
    it) is the run's own: the Runner starts with it and records it right after run_started,
    by ``budget_author``, so no default (``serve --budget``) ever applies to it. InputError
    says why not."""
    from goldfive.inputs import InputError

    limits = _budget(budget)  # refused before anything is imported or started
    agent = agent.strip()
    if agent == "demo":
        return with_budget(demo_run(speed or 1.0), limits, budget_author)
    if not agent:
        raise InputError("no agent: give 'demo' or MODULE:FUNCTION")
    try:
        launch = agent_run(agent, goal, None, None, None, search_dir=search_dir, plan_json=plan_json or None)
    except InputError:
        raise
    except GoldfiveError as exc:  # e.g. a framework adapter that cannot wrap the object
        raise InputError(str(exc)) from None
    return with_budget(launch, limits, budget_author)


def _budget(text: str) -> Any:
    from goldfive.budget.model import Budget, BudgetError
    from goldfive.inputs import InputError

    if not text.strip():
        return None
    try:
        limits = Budget.parse(text)
    except BudgetError as exc:
        raise InputError(f"the run's budget: {exc}") from None
    return None if limits.empty else limits


def with_budget(launch: Launch, budget: Any, author: str = "") -> Launch:
    """``launch`` whose Runner starts with its own ``budget`` (a Budget; None: unchanged),
    recorded as given by ``author``; the launch record says it too."""
    if budget is None:
        return launch
    import dataclasses

    make = launch.factory

    def factory(*, sinks: Any, control: Any, run_id: str) -> Any:
        runner = make(sinks=sinks, control=control, run_id=run_id)
        runner.config = dataclasses.replace(runner.config, budget=budget, budget_author=author)
        return runner

    spec = dataclasses.replace(launch.spec, budget=budget.spec()) if launch.spec is not None else None
    return Launch(factory, launch.user_input, spec)


def resume_with(launch: LaunchSpec) -> Any:
    """The factory that builds a run the hub started again, from the hub's own record of its
    launch. The agent is imported from this process's search directory (where ``serve`` was
    started), never from ``launch.cwd``; InputError says why it cannot be built. The run's
    budget is not given again: its recording holds it (raised since, perhaps)."""
    if launch.target == "demo":
        return demo_run(float(launch.speed or 1.0)).factory
    return agent_run(
        launch.target, launch.goal, None, launch.base_url or None, launch.model or None,
        plan_json=launch.plan_json or None,
    ).factory  # fmt: skip
