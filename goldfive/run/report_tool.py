"""One reporting tool, ``goldfive_report``, for adapters whose framework ends a run on its own.

A framework whose run ends with a final answer (the OpenAI Agents SDK's final output) completes
the task with that answer, so the agent need not call ``report_task_completed``; what is left to
report (progress, a failure, a blocker, new work, a divergence from the plan, an approval to
ask, a question for a person) goes through one tool with a ``kind`` instead of seven: a
framework that checks every tool of the agent on every run (the OpenAI Agents SDK does) pays
for one. Each kind runs the reporting tool it stands for (``goldfive.run.tools``), so the
drift, the status change and the approval are the same as when the model calls that tool.
"""

from __future__ import annotations

from typing import Any

from goldfive.run.tool_spec import ReportingToolSpec

__all__ = [
    "REPORT_KINDS",
    "REPORT_TOOL_DESCRIPTION",
    "REPORT_TOOL_NAME",
    "REPORT_TOOL_PARAMETERS",
    "REPORTING_TEXT",
    "report",
    "report_args",
]

REPORT_TOOL_NAME = "goldfive_report"
REPORT_TOOL_DESCRIPTION = "Report on the current task (anything but its result: your final answer is the result), or ask a person."

#: kind -> (the reporting tool it runs, {this tool's argument: that tool's argument}).
_KINDS: dict[str, tuple[str, dict[str, str]]] = {
    "progress": ("report_task_progress", {"detail": "detail", "fraction": "fraction"}),
    "failed": ("report_task_failed", {"detail": "reason", "recoverable": "recoverable"}),
    "blocked": ("report_task_blocked", {"detail": "blocker"}),
    "new_work": ("report_new_work_discovered", {"detail": "title", "description": "description"}),
    "divergence": ("report_plan_divergence", {"detail": "detail"}),
    "approval": ("report_awaiting_approval", {"detail": "prompt", "timeout_ms": "timeout_ms"}),
    "question": ("ask_person", {"detail": "prompt", "options": "options", "free_text": "free_text", "timeout_ms": "timeout_ms"}),
}

#: The kinds, in the order the schema lists them.
REPORT_KINDS = tuple(_KINDS)

REPORT_TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {
            "type": "string",
            "enum": list(REPORT_KINDS),
            "description": "progress (while you work), failed (the task cannot be done; ends it), blocked (something "
            "outside you must happen first), new_work (work the plan is missing), divergence (the plan no "
            "longer fits), approval (ask a person to approve before something risky; returns the decision), question "
            "(ask a person; returns the answer)",
        },
        "detail": {
            "type": "string",
            "description": "progress: what you did; failed: why; blocked: what blocks it; new_work: the new work's "
            "title; divergence: how the plan diverges; approval and question: what you ask",
        },
        "fraction": {"type": "number", "description": "progress: 0..1 done"},
        "recoverable": {"type": "boolean", "description": "failed: can a replan fix it"},
        "description": {"type": "string", "description": "new_work: details"},
        "options": {"type": "array", "items": {"type": "string"}, "description": "question: answers to pick from"},
        "free_text": {"type": "boolean", "description": "question: may the person type another answer (default true)"},
        "timeout_ms": {"type": "integer", "description": "approval and question: how long to wait"},
        "task_id": {"type": "string", "description": "the task id; defaults to the current task"},
    },
    "required": ["kind", "detail"],
    "additionalProperties": False,
}

#: What the task input tells the model about reporting when it has this tool.
REPORTING_TEXT = (
    "Your final answer is the task's result: when the task is done, answer with a short summary of it. "
    f"Use {REPORT_TOOL_NAME} to report progress while you work, that the task failed (this ends it) or is "
    "blocked, work the plan is missing or that the plan no longer fits, and to ask a person to approve something "
    "risky or to answer a question."
)

#: reporting tool -> (the kind standing for it, {that tool's argument: this tool's argument}).
_BY_TOOL: dict[str, tuple[str, dict[str, str]]] = {
    name: (kind, {theirs: ours for ours, theirs in mapping.items()}) for kind, (name, mapping) in _KINDS.items()
}


def report_args(name: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """The ``goldfive_report`` arguments standing for a call of the reporting tool ``name`` with
    ``args`` (a model calling a tool by its own name, from an older prompt), or None when no kind
    stands for it (``report_task_completed``: the final answer is the result;
    ``report_task_started``). An argument that tool does not take is kept under its name, for
    ``report`` to refuse."""
    found = _BY_TOOL.get(name)
    if found is None:
        return None
    kind, mapping = found
    out: dict[str, Any] = {"kind": kind}
    for key, value in args.items():
        out[mapping.get(key, key)] = value
    return out


def _error(problem: str) -> dict[str, Any]:
    return {"ok": False, "error": f"{REPORT_TOOL_NAME}: {problem}"}


async def report(tools: dict[str, ReportingToolSpec], args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Run the reporting tool ``args["kind"]`` stands for, from ``tools`` (a task's
    ``RunContext.tools_for``), with ``args`` mapped to its arguments. Returns that tool's name
    ("" when the arguments are wrong) and its answer; bad arguments come back as
    ``{"ok": False, "error": ...}`` and run nothing. An argument another kind takes is ignored."""
    kind = args.get("kind")
    if kind not in _KINDS:
        return "", _error(f"kind must be one of {', '.join(REPORT_KINDS)}, got {kind!r}")
    unknown = sorted(k for k in args if k not in REPORT_TOOL_PARAMETERS["properties"])
    if unknown:
        return "", _error(f"unknown argument(s): {', '.join(unknown)}")
    detail = args.get("detail")
    if not isinstance(detail, str) or not detail.strip():
        return "", _error(f"{kind} needs a non-empty detail")
    name, mapping = _KINDS[kind]
    kwargs = {theirs: args[ours] for ours, theirs in mapping.items() if args.get(ours) is not None}
    if args.get("task_id"):
        kwargs["task_id"] = args["task_id"]
    return name, await tools[name](**kwargs)
