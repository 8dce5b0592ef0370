"""The prompt that tells an agent where its task sits in the run (goals, plan, what is done):
goldfive's own LLM agent sends it as the system prompt, and the framework adapters put it
before the task in the framework run's input (``common.task_input``)."""

from __future__ import annotations

from goldfive.llm.prompts import render_prompt
from goldfive.steering import notes_of
from goldfive.types import Session, Task, TaskStatus

__all__ = ["system_prompt"]

#: How much of each completed task's result the prompt repeats.
_RESULT_CHARS = 600  # completed outputs are context for the model, not the whole artifact


def system_prompt(session: Session, task: Task) -> str:
    """The ``agent_task.system`` prompt for ``task``: goals, plan, completed results, the task;
    then the run's standing guidance (``agent_task.guidance``), when it has any."""
    goals = "\n".join(f"- {g.id}: {g.summary}" for g in session.goals) or "(none)"
    plan_lines: list[str] = []
    completed: list[str] = []
    if session.plan is not None:
        deps: dict[str, list[str]] = {}
        for e in session.plan.edges:
            deps.setdefault(e.to_task_id, []).append(e.from_task_id)
        for t in session.plan.tasks:
            after = f" (after {', '.join(deps[t.id])})" if t.id in deps else ""
            plan_lines.append(f"- {t.id} [{t.status}]: {t.title}{after}")
            if t.status == TaskStatus.COMPLETED:
                result = str(session.completed_results.get(t.id, "")).strip().replace("\n", " ")
                completed.append(f"- {t.id}: {result[:_RESULT_CHARS] or '(no result text)'}")
    prompt = render_prompt(
        "agent_task.system",
        goals=goals,
        plan="\n".join(plan_lines) or "(none)",
        completed="\n".join(completed) or "(none)",
        task_id=task.id,
        task_title=task.title,
        task_description=task.description or "(none)",
    )
    standing = notes_of(session).standing
    if not standing:
        return prompt
    guidance = "\n".join(f"- {n.text}" for n in standing)
    return f"{prompt.rstrip()}\n\n{render_prompt('agent_task.guidance', guidance=guidance).rstrip()}\n"
