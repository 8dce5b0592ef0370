"""The scripted model's agent: one deterministic tool-calling script per task.

Turn by turn, reading what is already in the message history:
1. ``report_task_progress`` (if offered and not yet called),
2. ``publish_deck`` (if offered, the task is the publish task, and not yet called),
3. ``report_task_completed`` with a result summary (adapted to the publish_deck result),
4. a final text answer, finish_reason "stop".
The latest ``[user_steering]...[/user_steering]`` message is acknowledged in every later
progress detail, summary and final text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from goldfive.llm.base import ChatResult, ToolCall
from goldfive.llm.scripted_plans import _topic, sections

_STEER_RE = re.compile(r"\[user_steering\](.*?)\[/user_steering\]", re.DOTALL)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _offered(tools: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for t in tools or ():
        fn = t.get("function", t)
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out[fn["name"]] = fn.get("parameters") or {}
    return out


def _fill_args(schema: dict[str, Any], candidates: dict[str, Any], fallback: str) -> dict[str, Any]:
    """Keep the candidate arguments the tool's schema declares; fill other required ones by type."""
    props = schema.get("properties") or {}
    if not props:
        return candidates
    args = {k: v for k, v in candidates.items() if k in props}
    for name in schema.get("required") or ():
        if name not in args:
            kind = (props.get(name) or {}).get("type")
            # "type" may also be a list (["integer", "null"]); anything but a plain name gets the fallback.
            typed: dict[str, object] = {"integer": 6, "number": 1.0, "boolean": True}
            args[name] = typed.get(kind, fallback) if isinstance(kind, str) else fallback
    return args


def _publish_outcome(result: str) -> tuple[bool, str]:
    """(published?, detail) from the publish_deck tool result text."""
    try:
        data = json.loads(result)
    except ValueError:
        data = None
    if isinstance(data, dict):
        if data.get("skipped") or data.get("error") or data.get("decision") in ("reject", "timeout", "unavailable"):
            reason = data.get("reason") or data.get("detail") or data.get("error") or data.get("decision") or "rejected"
            return False, str(reason)
        return True, str(data.get("url") or data.get("detail") or "")
    if result.lower().startswith("error"):
        return False, result
    return True, result


_NUMBER_WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
_SLIDES_RE = re.compile(r"\b(\d{1,2}|" + "|".join(_NUMBER_WORDS) + r")[- ]slides?\b", re.IGNORECASE)


def slide_count(*texts: str) -> int:
    """How many slides the revised plan asks for: "only 3 slides" -> 3, "fewer" -> 5, else 8.
    A replanned task's title carries the steer note, so the count follows the steer."""
    joined = " ".join(texts)
    found = _SLIDES_RE.findall(joined)
    if found:
        word = found[-1].lower()
        count = int(word) if word.isdigit() else _NUMBER_WORDS[word]
        if count > 0:
            return count
    return 5 if "fewer" in joined.lower() else 8


def _summary(stage: str, title: str, topic: str, steer: str, publish: tuple[bool, str] | None) -> str:
    slides = slide_count(title, steer)
    if publish is not None:
        ok, detail = publish
        if not ok:
            return f"publishing was rejected ({detail}); the deck was not published"
        return f"published the {slides}-slide deck" + (f": {detail}" if detail else "")
    canned = {
        "research": f"collected 5 key facts and 3 sources about {topic}",
        "outline": f"outlined {slides} slides, one message each",
        "draft": f"drafted {slides} slides with speaker notes",
        "review": "reviewed the draft: 3 fixes applied, ready to publish",
        "publish": "the deck is ready; publishing was not available",
    }
    return canned.get(stage, f"completed: {title}")


def agent_turn(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> ChatResult:
    offered = _offered(tools)
    system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    sec = sections(system)
    task = dict(
        (k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in sec.get("current task", "").splitlines())
    )
    task_id, title = task.get("id", ""), task.get("title", "") or "the task"
    stages = ("research", "outline", "draft", "review", "publish")
    # The id decides first: "review" is titled "Review the draft".
    stage = next((s for s in stages if task_id == s or task_id.startswith(s + "_")), "")
    stage = stage or next((s for s in stages if s in f"{task_id} {title}".lower()), "")
    topic = _topic(sec.get("goals", ""))

    calls: list[tuple[str, str]] = []  # (call id, tool name)
    results: dict[str, str] = {}
    steer = ""
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            calls += [(tc.get("id", ""), (tc.get("function") or {}).get("name", "")) for tc in m.get("tool_calls") or ()]
        elif role == "tool":
            results[str(m.get("tool_call_id", ""))] = _text(m.get("content"))
        elif role == "user":
            found = _STEER_RE.findall(_text(m.get("content")))
            if found:
                steer = found[-1].strip()
    called = {name for _, name in calls}
    steer_note = f" (following steering: {steer})" if steer else ""
    base = {"task_id": task_id} if task_id else {}

    def call(name: str, candidates: dict[str, Any]) -> ChatResult:
        args = _fill_args(offered[name], {**base, **candidates}, title)
        tc = ToolCall(id=f"call_{len(calls) + 1}", name=name, arguments_json=json.dumps(args))
        return ChatResult(content="", tool_calls=(tc,), finish_reason="tool_calls")

    if "report_task_progress" in offered and "report_task_progress" not in called:
        return call("report_task_progress", {"fraction": 0.5, "detail": f"working on {title}{steer_note}"})
    is_publish = stage == "publish"
    if is_publish and "publish_deck" in offered and "publish_deck" not in called:
        slides = slide_count(title, steer)
        return call("publish_deck", {"title": f"Slides about {topic}", "slides": slides, "audience": "eng"})
    publish = None
    pub_id = next((cid for cid, name in calls if name == "publish_deck"), None)
    if pub_id is not None:
        publish = _publish_outcome(results.get(pub_id, ""))
    summary = _summary(stage, title, topic, steer, publish) + steer_note
    if "report_task_completed" in offered and "report_task_completed" not in called:
        return call("report_task_completed", {"summary": summary, "result": summary})
    return ChatResult(content=f"Done with {title}: {summary}", finish_reason="stop")
