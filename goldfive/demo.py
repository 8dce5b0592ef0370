"""The built-in demo: a slide-deck agent on the real code path, offline by default.

The goal deriver, the planner and the agent are the LLM ones (LLMGoalDeriver, LLMPlanner,
LLMAgentAdapter); what answers them is the deterministic ScriptedModel, or any
OpenAI-compatible server when a base URL and model are given. Tasks: research, outline, draft,
review, publish; publish calls ``publish_deck``, which needs approval; a STEER replans.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
import sys
from collections.abc import Callable, Iterable
from typing import Any, Literal, TextIO

from goldfive import events
from goldfive.adapters.llm_agent import LLMAgentAdapter
from goldfive.control import ControlChannel, ControlKind, ControlMessage
from goldfive.event_format import EventLines, format_event
from goldfive.executors.sequential import SequentialExecutor
from goldfive.llm.base import ChatModel
from goldfive.llm.openai_compat import OpenAICompatClient
from goldfive.llm.scripted import SCRIPTED_MODEL, ScriptedModel
from goldfive.run.config import RuntimeConfig
from goldfive.run.defaults import run_defaults
from goldfive.usage.prices import Price, PriceTable, default_prices
from goldfive.planners.goals import LLMGoalDeriver
from goldfive.planners.llm import LLMPlanner
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink, Missed
from goldfive.run.user_tools import UserTool

__all__ = [
    "DEMO_GOAL",
    "DEMO_PRICE",
    "AGENT_ANSWER_DELAY_S",
    "PLANNER_ANSWER_DELAY_S",
    "demo_prices",
    "format_event",
    "make_demo_runner",
    "publish_deck",
    "run_headless",
]

DEMO_GOAL = "build me a slide deck about Python"

#: Seconds the offline model "thinks" per answer at speed 1. A task is 2 agent answers
#: (progress, completed), publish 3 (plus the tool call), so a task takes 2.5-3.75 s.
AGENT_ANSWER_DELAY_S = 1.25
#: Goal derivation, planning and replanning answers.
PLANNER_ANSWER_DELAY_S = 0.6

Approvals = Literal["approve", "reject", "wait"]


def publish_deck(title: str, slides: int, audience: str) -> dict[str, Any]:
    """Publish the slide deck to the team site (needs approval)."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "deck"
    return {"ok": True, "url": f"https://decks.example.com/{audience}/{slug}", "slides": slides}


#: What the demo pretends its offline model costs, USD per million tokens, so its header shows
#: a cost: an illustration (recorded with cost_source "prices:demo"), not any provider's price.
DEMO_PRICE = Price(input=2.0, output=8.0, cached_input=0.5)


def demo_prices(prices: PriceTable | None = None) -> PriceTable:
    """``prices`` (the shipped table by default) with the demo's price for the scripted model."""
    return (prices or default_prices()).with_overrides({SCRIPTED_MODEL: DEMO_PRICE}, "prices:demo")


def _scripted(delay_s: float, speed: float) -> ScriptedModel:
    if speed <= 0:
        raise ValueError(f"speed must be positive, got {speed}")
    # ScriptedModel.speed multiplies the delay; the demo's speed divides it (2 = twice as fast).
    return ScriptedModel(delay_s=delay_s, speed=1.0 / speed, report_usage=True)


def _publish_prompt(args: dict[str, Any]) -> str:
    return f"Publish the {args.get('slides', '?')}-slide deck to the {args.get('audience', 'team')} team site?"


def make_demo_runner(
    *,
    sinks: Iterable[Any] = (),
    control: ControlChannel | None = None,
    speed: float = 1.0,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    run_id: str | None = None,
    clock: Callable[[], int] | None = None,
    config: RuntimeConfig | None = None,
) -> Runner:
    """A Runner for the demo scenario. Offline (ScriptedModel) unless ``base_url`` or
    ``model`` is given; then one OpenAICompatClient serves the planner and the agent (the
    runner's ``adapter.model``; close it with ``await runner.adapter.model.aclose()``).
    Offline, the scripted model reports its tokens and is priced at ``DEMO_PRICE``."""
    config = config or RuntimeConfig()
    planner_model: ChatModel
    agent_model: ChatModel
    model_name = model or ""
    if base_url is not None or model is not None:
        client = OpenAICompatClient(base_url=base_url, model=model, api_key=api_key)
        planner_model = agent_model = client
        model_name = client.model
    else:
        planner_model = _scripted(PLANNER_ANSWER_DELAY_S, speed)
        agent_model = _scripted(AGENT_ANSWER_DELAY_S, speed)
        table = config.prices or run_defaults().prices
        if table is None or table.price(SCRIPTED_MODEL) is None:  # a --prices file may price it
            table = demo_prices(table)
        config = replace(config, prices=table)
    agent = LLMAgentAdapter(
        agent_model,
        model_name=model_name,
        tools=[UserTool(publish_deck, requires_approval=True, approval_prompt=_publish_prompt)],
        name="deck_agent",
    )
    return Runner(
        agent=agent,
        planner=LLMPlanner(call_llm=planner_model.call_llm, model=model_name),
        executor=SequentialExecutor(),
        goal_deriver=LLMGoalDeriver(call_llm=planner_model.call_llm, model=model_name),
        sinks=list(sinks),
        control=control,
        run_id=run_id,
        clock=clock,
        config=config,
    )


async def run_headless(
    *,
    speed: float = 1.0,
    approvals: Approvals = "approve",
    out: TextIO = sys.stdout,
    base_url: str | None = None,
    model: str | None = None,
) -> int:
    """Run the demo without the TUI, one line per event on ``out``. Approval requests are
    answered per ``approvals`` ("wait" leaves them to the channel's default timeout).
    A run over its budget (``--budget``) is cancelled, saying so: nobody here can raise it.
    Returns 0 when the run completed, 1 otherwise."""
    if approvals not in ("approve", "reject", "wait"):
        raise ValueError(f"approvals must be approve, reject or wait, got {approvals!r}")
    sink = InMemorySink()
    channel = ControlChannel()
    runner = make_demo_runner(sinks=[sink, *run_defaults().sinks()], control=channel, speed=speed, base_url=base_url, model=model)
    watcher = asyncio.create_task(_print_and_answer(sink, channel, approvals, out))
    try:
        outcome = await runner.run(DEMO_GOAL)
        # The runner closed the sink: the watcher ends after the last event.
        await watcher
    finally:
        if not watcher.done():
            watcher.cancel()
        channel.close()
        await runner.close()
        aclose = getattr(runner.adapter.model, "aclose", None)
        if aclose is not None:
            await aclose()
    return 0 if outcome.success else 1


async def _print_and_answer(sink: InMemorySink, channel: ControlChannel, approvals: Approvals, out: TextIO) -> None:
    decide = {"approve": ControlKind.APPROVE, "reject": ControlKind.REJECT}.get(approvals)
    lines = EventLines()  # one line per control, as the TUI's log shows it
    async with sink.subscribe() as sub:
        async for ev in sub:
            if isinstance(ev, Missed):
                print(f"   … missed {ev.count} events ({ev.first_sequence}..{ev.last_sequence})", file=out, flush=True)
                continue
            for line in lines.lines(ev):
                print(line, file=out, flush=True)
            if decide is not None and events.kind_of(ev) == "approval_requested":
                detail = f"headless --approvals {approvals}"
                target = ev.approval_requested.target_id
                await channel.send(ControlMessage(decide, payload={"target_id": target, "detail": detail, "author": "headless"}))
            elif events.kind_of(ev) == "budget_reached":
                # Nobody here can raise it: the run ends, saying why (exit 1).
                why = f"budget reached, {ev.budget_reached.detail} (headless: nobody to raise it)"
                await channel.send(ControlMessage(ControlKind.CANCEL, payload={"reason": why, "author": "headless"}))
    for line in lines.flush():  # a control the run never acked
        print(line, file=out, flush=True)
