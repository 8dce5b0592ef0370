"""Turn a model's text answer into checked data. Every failure is a ValueError whose message
names what was wrong, worded so it can be fed back to the model verbatim."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from goldfive.errors import GoldfiveError

_FENCE_OPEN_RE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n")


class AnswerError(GoldfiveError, ValueError):
    """A model answer that cannot be used; the message is the feedback for the next attempt."""


def extract_json_object(text: str) -> dict[str, Any]:
    """The JSON object in ``text``: bare, inside a fenced code block, or amid prose."""
    stripped = (text or "").strip()
    if not stripped:
        raise AnswerError("empty answer")
    candidate = _unfence(stripped)
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as e:
        # A model that wraps the object in a sentence: try the outermost braces before giving up.
        start, end = candidate.find("{"), candidate.rfind("}")
        data = None
        if 0 <= start < end:
            try:
                data = json.loads(candidate[start : end + 1])
            except json.JSONDecodeError:
                data = None
        if data is None:
            raise AnswerError(f"not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(data, dict):
        raise AnswerError(f"answer is a JSON {type(data).__name__}, expected an object")
    return data


def _unfence(text: str) -> str:
    """The body of the first fenced code block, or ``text`` when there is none.
    (str.find, not a lazy DOTALL regex: that one costs O(n) steps per character tried.)"""
    start = text.find("```")
    if start < 0:
        return text
    opening = _FENCE_OPEN_RE.match(text, start)
    if opening is None:
        return text
    end = text.find("```", opening.end())
    return text[opening.end() : end if end >= 0 else len(text)].strip()


@dataclass(frozen=True)
class RawTask:
    id: str
    title: str
    description: str = ""
    assignee_agent_id: str = ""
    status: str = ""  # only present when the model echoes it; used to spot re-listed work


@dataclass(frozen=True)
class RawPlan:
    tasks: tuple[RawTask, ...]
    edges: tuple[tuple[str, str], ...]
    summary: str = ""
    id: str = ""


def _opt_str(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise AnswerError(f"{where}.{key} must be a string, got {type(value).__name__}")
    return value


def _req_str(obj: dict[str, Any], key: str, where: str) -> str:
    if key not in obj:
        raise AnswerError(f"{where} is missing '{key}'")
    value = _opt_str(obj, key, where).strip()
    if not value:
        raise AnswerError(f"{where}.{key} is empty")
    return value


def parse_plan_answer(text: str) -> RawPlan:
    """Shape checks only; graph rules are Plan.validate()'s job. Unknown keys are ignored."""
    data = extract_json_object(text)
    if "tasks" not in data:
        raise AnswerError("answer is missing 'tasks'")
    tasks_in = data["tasks"]
    if not isinstance(tasks_in, list):
        raise AnswerError(f"'tasks' must be a list, got {type(tasks_in).__name__}")
    if not tasks_in:
        raise AnswerError("'tasks' is empty: the plan has no tasks")
    tasks: list[RawTask] = []
    for i, t in enumerate(tasks_in):
        where = f"tasks[{i}]"
        if not isinstance(t, dict):
            raise AnswerError(f"{where} must be an object, got {type(t).__name__}")
        tasks.append(
            RawTask(
                id=_req_str(t, "id", where),
                title=_req_str(t, "title", where),
                description=_opt_str(t, "description", where),
                assignee_agent_id=_opt_str(t, "assignee_agent_id", where),
                status=_opt_str(t, "status", where).strip().upper(),
            )
        )
    edges_in = data.get("edges") or []
    if not isinstance(edges_in, list):
        raise AnswerError(f"'edges' must be a list, got {type(edges_in).__name__}")
    edges: list[tuple[str, str]] = []
    for i, e in enumerate(edges_in):
        where = f"edges[{i}]"
        if not isinstance(e, dict):
            raise AnswerError(f"{where} must be an object, got {type(e).__name__}")
        edges.append((_req_str(e, "from_task_id", where), _req_str(e, "to_task_id", where)))
    return RawPlan(
        tasks=tuple(tasks),
        edges=tuple(edges),
        summary=_opt_str(data, "summary", "answer"),
        id=_opt_str(data, "id", "answer"),
    )


def parse_goals_answer(text: str) -> list[tuple[str, str]]:
    """``[(id, summary), ...]`` from ``{"goals": [{"id", "summary"}]}``."""
    data = extract_json_object(text)
    goals_in = data.get("goals")
    if goals_in is None:
        raise AnswerError("answer is missing 'goals'")
    if not isinstance(goals_in, list):
        raise AnswerError(f"'goals' must be a list, got {type(goals_in).__name__}")
    if not goals_in:
        raise AnswerError("'goals' is empty")
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, g in enumerate(goals_in):
        where = f"goals[{i}]"
        if not isinstance(g, dict):
            raise AnswerError(f"{where} must be an object, got {type(g).__name__}")
        gid, summary = _req_str(g, "id", where), _req_str(g, "summary", where)
        if gid in seen:
            raise AnswerError(f"duplicate goal id: {gid}")
        seen.add(gid)
        out.append((gid, summary))
    return out
