"""A reviewer that asks a person only when needed: the approval policy "review"
(docs/approvals.md#a-reviewer).

A model reads the instructions a person wrote, the run's goal, the task, the tool and its
arguments, and answers a strict JSON verdict ``{"decision": "approve" | "reject" | "ask",
"reason": "..."}``. Anything else (a model error, a timeout, text that is not exactly such an
object) is "ask": the call goes to a person, never approved by a failure.

How it meets the rest of the approvals (``goldfive.run.approvals``): the approval is requested
as always (every client shows it and a person may decide at once); the reviewer's verdict is an
``approval_reviewed`` event; an approve or reject applies after ``grace_s`` seconds only if no
person decided first (a person's decision during the grace wins, and the call has not run);
"ask" leaves the approval waiting for a person, with the reviewer's reason shown. A tool marked
never-automatic in the rules is never reviewed.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from goldfive.clean import json_encoder

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.llm.base import CallLLM

__all__ = ["REVIEWER", "DECISIONS", "Reviewer", "Verdict", "parse_verdict", "review_call"]

#: The author and the client of a reviewer's decision in the ledger.
REVIEWER = "reviewer"
DECISIONS = ("approve", "reject", "ask")
#: Longest reason kept from the model (the rest is cut, said with "...").
MAX_REASON = 500


@dataclass(frozen=True)
class Reviewer:
    """The run's reviewer (``RuntimeConfig.approval_reviewer``).

    ``call_llm`` is the model asked (``async (system, user, model) -> str``); None asks the run's
    own model, the planner's ``call_llm`` (an LLMPlanner's); a run with neither escalates every
    call, saying why. ``grace_s`` is how long an approve or reject waits for a person to
    overrule it; ``timeout_s`` bounds the model's answer (then: ask a person)."""

    instructions: str
    call_llm: CallLLM | None = None
    model: str = ""
    grace_s: float = 2.0
    timeout_s: float = 60.0
    #: Tool names (shell-style patterns) it never reviews: their calls go to a person, as a
    #: never-auto tool's do (``serve --approvers`` adds the tools it names).
    never: tuple[str, ...] = ()

    def reviews(self, tool_name: str) -> bool:
        """False when ``tool_name`` is one it never reviews."""
        return not any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in self.never)

    def __post_init__(self) -> None:
        if not isinstance(self.instructions, str) or not self.instructions.strip():
            raise ValueError("a reviewer needs instructions: say which calls it may approve or reject")
        if not self.grace_s >= 0:
            raise ValueError(f"grace_s must be >= 0 seconds, got {self.grace_s}")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, got {self.timeout_s}")
        object.__setattr__(self, "never", tuple(self.never))


@dataclass(frozen=True)
class Verdict:
    decision: str
    reason: str
    #: Why it is "ask" although the model did not say so ("" when the model answered).
    error: str = ""


def parse_verdict(text: str) -> Verdict:
    """The model's answer as a Verdict; ValueError with a sentence when it is not exactly one
    JSON object with a known ``decision`` and a text ``reason`` (one ```json fence allowed)."""
    body = text.strip()
    if body.startswith("```"):
        first, _, rest = body.partition("\n")
        if first.strip() in ("```", "```json") and rest.rstrip().endswith("```"):
            body = rest.rstrip()[:-3].strip()
    try:
        data = json.loads(body)
    except ValueError:
        shown = body if len(body) <= 80 else body[:80] + "..."
        raise ValueError(f"the reviewer's answer is not JSON: {shown!r}") from None
    if not isinstance(data, dict):
        raise ValueError(f"the reviewer's answer must be a JSON object, got {type(data).__name__}")
    extra = sorted(set(data) - {"decision", "reason"})
    if extra:
        raise ValueError(f"the reviewer's answer has unknown keys {extra}: only decision and reason")
    decision = data.get("decision")
    if decision not in DECISIONS:
        raise ValueError(f"the reviewer's decision must be approve, reject or ask, got {decision!r}")
    reason = data.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("the reviewer's answer gives no reason (a non-empty text)")
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON:
        reason = reason[:MAX_REASON] + "..."
    return Verdict(str(decision), reason)


#: ``json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)``, its encoder made once.
_args_json = json_encoder(sort_keys=True, ensure_ascii=False, default=str)


def review_prompt(reviewer: Reviewer, *, goal: str, task: str, tool_name: str, args: Any, asked: str = "") -> tuple[str, str]:
    """(system, user) for the model."""
    from goldfive.llm.prompts import render_prompt

    system = render_prompt("approval_review.system", instructions=reviewer.instructions.strip())
    user = render_prompt(
        "approval_review.user",
        asked=" ".join(asked.split()) or "(not known)",
        goal=goal or "(not known)",
        task=task or "(no task)",
        tool=tool_name,
        args=_args_json(args if args is not None else {}),
    )
    return system, user


async def review_call(
    reviewer: Reviewer, call_llm: CallLLM | None, *, goal: str, task: str, tool_name: str, args: Any, asked: str = ""
) -> Verdict:
    """Ask the model; every failure is an "ask" with the failure in ``error``. Cancelling the
    caller cancels the model call."""
    if call_llm is None:
        return Verdict("ask", "", "no model to review with: give Reviewer(call_llm=...) or use an LLM planner")
    system, user = review_prompt(reviewer, goal=goal, task=task, tool_name=tool_name, args=args, asked=asked)
    try:
        text = await asyncio.wait_for(call_llm(system, user, reviewer.model), reviewer.timeout_s)
    except TimeoutError:
        return Verdict("ask", "", f"the reviewer's model did not answer within {reviewer.timeout_s:g} s")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the model means: a person decides
        return Verdict("ask", "", f"the reviewer's model failed: {type(exc).__name__}: {exc}")
    if not isinstance(text, str):
        return Verdict("ask", "", f"the reviewer's model answered a {type(text).__name__}, not text")
    try:
        return parse_verdict(text)
    except ValueError as exc:
        return Verdict("ask", "", str(exc))
