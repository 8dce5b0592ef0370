"""LLMPlanner: plans and replans by asking a model for strict JSON, validating every answer."""

from __future__ import annotations

import json
from typing import Any

from goldfive.errors import LLMError, PlannerError
from goldfive.llm.base import CallLLM
from goldfive.llm.prompts import load_prompt, render_prompt
from goldfive.planners.assemble import build_generated_plan, build_refined_plan
from goldfive.planners.parse import parse_plan_answer
from goldfive.planners.retry import AnswersExhausted, ask_until_valid
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Goal, Plan, TaskStatus

_RESULT_CHARS = 600  # completed outputs are context, not the whole artifact


def format_goals(goals: list[Goal]) -> str:
    return "\n".join(f"- {g.id}: {g.summary}" for g in goals) or "(none)"


def _format_context(context: dict[str, Any] | None) -> str:
    if not context:
        return "(none)"
    return json.dumps(context, default=str, indent=1, sort_keys=True)


def _format_completed(plan: Plan, results: dict[str, str]) -> str:
    lines: list[str] = []
    for t in plan.tasks:
        if t.status == TaskStatus.COMPLETED:
            lines.append(f"- {t.id}: {t.title}")
            result = str(results.get(t.id, "")).strip().replace("\n", " ")
            if result:
                lines.append(f"  result: {result[:_RESULT_CHARS]}")
    return "\n".join(lines) or "(none)"


def _format_open(plan: Plan) -> str:
    lines: list[str] = []
    for t in plan.tasks:
        if t.status != TaskStatus.COMPLETED:
            lines.append(f"- {t.id} [{t.status}]: {t.title}")
            if t.description:
                lines.append(f"  description: {t.description}")
    return "\n".join(lines) or "(none)"


class LLMPlanner:
    """Implements the Planner protocol over ``call_llm``.

    A rejected answer is retried with the rejection in the next prompt, ``max_attempts`` in all.
    Then ``generate`` raises PlannerError and ``refine`` returns None with ``last_error`` set.
    Cancelling a call cancels the model call in flight.
    """

    def __init__(self, call_llm: CallLLM, model: str = "", max_attempts: int = 3) -> None:
        self.call_llm = call_llm
        self.model = model
        self.max_attempts = max_attempts
        self.last_error = ""

    async def generate(
        self, *, goals: list[Goal], available_agents: list[str], context: dict[str, Any] | None = None
    ) -> Plan:
        user = render_prompt(
            "plan_generate.user",
            goals=format_goals(goals),
            agents=", ".join(available_agents) or "(any)",
            context=_format_context(context),
        )
        try:
            return await ask_until_valid(
                self.call_llm,
                system=load_prompt("plan_generate.system"),
                user=user,
                model=self.model,
                parse=lambda text: build_generated_plan(parse_plan_answer(text), goals, available_agents),
                max_attempts=self.max_attempts,
            )
        except AnswersExhausted as e:
            self.last_error = str(e)
            raise PlannerError(str(e)) from None
        except LLMError as e:
            self.last_error = f"planner model call failed: {e}"
            raise PlannerError(self.last_error) from e

    async def refine(self, *, plan: Plan, drift: DriftEvent, goals: list[Goal]) -> Plan | None:
        """None means "no revision": the drift is below WARNING, or every answer was rejected
        (then ``last_error`` says why)."""
        self.last_error = ""
        steer = drift.kind == DriftKind.USER_STEER
        if not steer and drift.severity < DriftSeverity.WARNING:
            return None
        results = drift.metadata.get("completed_results") or {}
        if steer:
            note = str(drift.metadata.get("note") or drift.detail)
            system = load_prompt("plan_refine_steer.system")
            user = render_prompt(
                "plan_refine_steer.user",
                note=note,
                suggested_action=str(drift.metadata.get("suggested_action") or "(none)"),
                goals=format_goals(goals),
                completed=_format_completed(plan, results),
                dropped=_format_open(plan),
                used_ids=", ".join(t.id for t in plan.tasks),
            )
            kind, severity = DriftKind.USER_STEER.value, DriftSeverity.WARNING.value
        else:
            system = load_prompt("plan_refine_drift.system")
            user = render_prompt(
                "plan_refine_drift.user",
                kind=drift.kind.value,
                severity=drift.severity.value,
                task_id=drift.task_id or "(none)",
                detail=drift.detail or "(none)",
                goals=format_goals(goals),
                completed=_format_completed(plan, results),
                remaining=_format_open(plan),
                edges="\n".join(f"- {e.from_task_id} -> {e.to_task_id}" for e in plan.edges) or "(none)",
            )
            kind, severity = drift.kind.value, drift.severity.value
        guidance = _format_guidance(drift.metadata.get("standing_guidance"))
        if guidance:  # before the closing instruction, which stays last
            head, _, last = user.rstrip().rpartition("\n\n")
            user = f"{head}\n\n{guidance}\n\n{last}\n"
        try:
            return await ask_until_valid(
                self.call_llm,
                system=system,
                user=user,
                model=self.model,
                parse=lambda text: build_refined_plan(
                    parse_plan_answer(text),
                    plan,
                    rename_reused_ids=steer,
                    revision_index=plan.revision_index + 1,
                    revision_kind=kind,
                    revision_severity=severity,
                    revision_reason=drift.detail,
                ),
                max_attempts=self.max_attempts,
            )
        except AnswersExhausted as e:
            self.last_error = str(e)
        except LLMError as e:
            self.last_error = f"planner model call failed: {e}"
        return None


def _format_guidance(standing: object) -> str:
    """The ``plan_refine.guidance`` section for the run's standing guidance ("" when none):
    a replan follows it as every later task's input does."""
    if not isinstance(standing, (list, tuple)) or not standing:
        return ""
    lines = "\n".join(f"- {' '.join(str(text).split())}" for text in standing)
    return render_prompt("plan_refine.guidance", guidance=lines).strip()
