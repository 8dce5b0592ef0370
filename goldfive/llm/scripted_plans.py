"""What the scripted model answers to planner and goal-deriver prompts.

It reads the same prompts a real model reads (sections headed ``## ...``) and answers text that
goes through the same JSON parsing and validation, fenced like many real models fence it.
"""

from __future__ import annotations

import json
import re
from typing import Any

DECK_STAGES: tuple[tuple[str, str, str], ...] = (
    ("research", "Research {topic}", "Collect the key facts, examples and sources about {topic} for the audience."),
    ("outline", "Outline the deck", "Turn the research into a slide-by-slide outline with one message per slide."),
    ("draft", "Draft the slides", "Write the slides from the outline: titles, bullets and speaker notes."),
    ("review", "Review the draft", "Check the draft for accuracy, clarity and flow; fix what is weak."),
    ("publish", "Publish the deck", "Publish the reviewed deck with the publish_deck tool (needs approval)."),
)
_STAGE_IDS = [s[0] for s in DECK_STAGES]
_STOPWORDS = frozenset("a an the on of to for and or in with more less be it this that please".split())


def sections(text: str) -> dict[str, str]:
    """``## Header`` blocks of a prompt, keyed by the lower-cased header."""
    out: dict[str, str] = {}
    key = ""
    for line in text.splitlines():
        if line.startswith("## "):
            key = line[3:].strip().lower()
            out[key] = ""
        elif key:
            out[key] += line + "\n"
    return {k: v.strip() for k, v in out.items()}


def listed_ids(block: str) -> list[tuple[str, str]]:
    """``[(id, title)]`` from lines ``- id: title`` or ``- id [STATUS]: title``."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^- (\S+?)(?: \[\w+\])?: (.*)$", block, re.MULTILINE)]


def slug(text: str, max_words: int = 3) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOPWORDS]
    return "_".join(words[:max_words]) or "work"


def _fenced(obj: dict[str, Any]) -> str:
    return "```json\n" + json.dumps(obj, indent=1) + "\n```"


def _is_deck(text: str) -> bool:
    return bool(re.search(r"\b(slides?|deck|presentation)\b", text, re.IGNORECASE))


def _topic(goals_text: str) -> str:
    m = re.search(r"\babout (.+?)(?:[.\n]|$)", goals_text, re.IGNORECASE)
    return m.group(1).strip() if m else "the topic"


def _linear(ids: list[str]) -> list[dict[str, str]]:
    return [{"from_task_id": a, "to_task_id": b} for a, b in zip(ids, ids[1:])]


def answer_generate(user: str) -> str:
    goals_block = sections(user).get("goals", "")
    goal_text = " ".join(t for _, t in listed_ids(goals_block)) or goals_block
    if _is_deck(goal_text):
        topic = _topic(goal_text)
        tasks = [
            {"id": sid, "title": title.format(topic=topic), "description": desc.format(topic=topic)}
            for sid, title, desc in DECK_STAGES
        ]
        summary = f"Research, outline, draft, review and publish a slide deck about {topic}."
    else:
        goal = goal_text.strip() or "the goal"
        tasks = [
            {"id": "plan", "title": f"Plan: {goal}", "description": f"Work out the steps needed for: {goal}."},
            {"id": "execute", "title": f"Do: {goal}", "description": f"Carry out the steps for: {goal}."},
            {"id": "check", "title": f"Check: {goal}", "description": f"Verify the result meets: {goal}."},
        ]
        summary = f"Plan, do and check: {goal}."
    ids = [t["id"] for t in tasks]
    return _fenced({"summary": summary, "tasks": tasks, "edges": _linear(ids)})


def _stage_of(task_id: str) -> str:
    for sid in _STAGE_IDS:
        if task_id == sid or task_id.startswith(sid + "_"):
            return sid
    return ""


def answer_steer(user: str) -> str:
    sec = sections(user)
    note = sec.get("steering note", "").strip() or "the new direction"
    completed = [i for i, _ in listed_ids(sec.get("completed tasks", ""))]
    dropped = listed_ids(sec.get("dropped tasks", ""))
    word = slug(note, 1)
    if any(_stage_of(i) for i in completed) or any(_stage_of(i) for i, _ in dropped):
        done = [_stage_of(i) for i in completed if _stage_of(i)]
        first = max((_STAGE_IDS.index(s) + 1 for s in done), default=0)
        stages = list(DECK_STAGES[first:]) or [DECK_STAGES[-1]]
        tasks = []
        for n, (sid, title, desc) in enumerate(stages):
            head = f"{sid}: {note}" if n == 0 else f"{sid} ({note})"
            tasks.append({"id": f"{sid}_{word}", "title": head, "description": f"{desc.format(topic='the topic')} Follow the steer: {note}."})
    else:
        tasks = [
            {"id": f"steer_{word}", "title": f"do: {note}", "description": f"Carry out the steer: {note}."},
            {"id": f"check_{word}", "title": f"check: {note}", "description": f"Verify the work follows: {note}."},
        ]
    ids = [t["id"] for t in tasks]
    edges = _linear(ids)
    if completed:
        edges.insert(0, {"from_task_id": completed[-1], "to_task_id": ids[0]})
    return _fenced({"summary": f"Replanned after steer: {note}", "tasks": tasks, "edges": edges})


def answer_drift(user: str) -> str:
    sec = sections(user)
    drift = dict(
        (k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in sec.get("drift", "").splitlines())
    )
    completed = [i for i, _ in listed_ids(sec.get("completed tasks", ""))]
    remaining = [(i, t) for i, t in listed_ids(sec.get("remaining tasks", ""))]
    detail = drift.get("detail", "the drift")
    taken = set(completed) | {i for i, _ in remaining}
    rid = base = f"recover_{slug(drift.get('kind', 'drift'), 2)}"
    n = 2
    while rid in taken:
        rid, n = f"{base}_{n}", n + 1
    tasks = [{"id": rid, "title": f"address: {detail}", "description": f"Deal with: {detail}."}]
    tasks += [{"id": i, "title": t, "description": ""} for i, t in remaining]
    ids = [t["id"] for t in tasks]
    edges = _linear(ids)
    if completed:
        edges.insert(0, {"from_task_id": completed[-1], "to_task_id": ids[0]})
    return _fenced({"summary": f"Revised after {drift.get('kind', 'drift')}: {detail}", "tasks": tasks, "edges": edges})


def answer_goals(user: str) -> str:
    request = sections(user).get("request", user).strip()
    parts = [p.strip(" -*\t") for p in re.split(r"\n|;", request) if p.strip(" -*\t")] or ["(empty request)"]
    goals = [{"id": f"g{n}", "summary": p} for n, p in enumerate(parts, 1)]
    return json.dumps({"goals": goals})


def answer_review(user: str) -> str:
    """The scripted model does not judge tool calls: it asks a person, every time (a real
    model answers by the instructions; tests script its verdicts with ``faults``)."""
    return json.dumps({"decision": "ask", "reason": "the scripted model does not judge calls: a person decides"})
