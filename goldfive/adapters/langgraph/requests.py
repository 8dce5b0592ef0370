"""The interrupts a graph stops on, read once into what a person decides and answered back.

Four shapes of ``Interrupt.value`` are understood, each answered in its own resume form:

- LangChain v1's ``HumanInTheLoopMiddleware``, batched mode (its default): one interrupt per
  model turn, ``{"action_requests": [{name, args, description}], "review_configs":
  [{action_name, allowed_decisions}]}``, resumed with ``{"decisions": [...]}`` in the order of
  the requests;
- the same middleware in ``per_call`` mode: one interrupt per gated call, ``{"type":
  "tool_approval", "tool_call_id", "name", "args", "description"}`` whose ``response_schema``
  names the allowed decisions, resumed with one decision;
- the Agent Inbox request (``{"action_request": {"action", "args"}, "config": {allow_*},
  "description"}``, alone or as a list of one) that :func:`ask_first` raises, resumed with a
  ``HumanResponse`` (``accept`` / ``edit`` / ``response`` / ``ignore``);
- any other value (``interrupt("Deploy api?")``): a question to the person
  (docs/approvals.md#questions), offering the ``options`` of a ``{"question", "options"}``
  value; an ANSWER resumes with its text (or the JSON object or array typed), and from a client
  that knows no questions approve resumes with ``True``, reject with ``False``.

A call whose review config allows only ``respond`` (an "ask the user" tool) is a question
too; its answer goes back as ``respond`` with the person's words.

A decision is one of ``approve``, ``edit`` (``edited_action``), ``reject`` (``message``) and
``respond`` (``message``). Only what the request allows is sent: edits are offered only where
``edit`` is allowed (otherwise an APPROVE with arguments is refused before anything runs), a
rejection goes as ``reject``, else ``respond`` with the denial; a request that allows neither
cannot take a rejection, which :class:`Unanswerable` says.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from goldfive.adapters.common import Answer, ToolDecision, to_text
from goldfive.errors import GoldfiveError

__all__ = ["Ask", "Request", "Unanswerable", "read_request"]

ALL_DECISIONS = frozenset({"approve", "edit", "reject", "respond"})
RESPOND_ONLY = frozenset({"respond"})
#: What a respond-only request (an "ask the user" tool) gets for an approval.
YES = "yes"


class Unanswerable(GoldfiveError):
    """The person's decision cannot be put in the form the graph accepts (the task fails)."""


@dataclass(frozen=True)
class Ask:
    """One thing a person decides: a tool call, or a question (``tool_name`` empty)."""

    tool_name: str
    args: dict[str, Any]
    #: The tool call's id (the approval's target); "" when the request does not name it.
    call_id: str
    prompt: str
    #: The decisions the request accepts (LangChain's names).
    allowed: frozenset[str] = ALL_DECISIONS
    parameters: dict[str, Any] | None = None
    #: A question's answers to pick from (none: typed).
    options: tuple[str, ...] = ()

    @property
    def is_question(self) -> bool:
        """A question for the person rather than a yes/no on a call: a plain interrupt, or a
        call whose only allowed decision is ``respond``."""
        return not self.tool_name or self.allowed == RESPOND_ONLY

    @property
    def editable(self) -> bool:
        return "edit" in self.allowed


@dataclass(frozen=True)
class Request:
    """One interrupt: what to ask, and how the answers go back (``answer``)."""

    shape: str
    asks: list[Ask]
    #: For the Agent Inbox shape: the request came as a list of one, so the answer goes as one.
    as_list: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def answer(self, decisions: Sequence[ToolDecision | Answer]) -> Any:
        """The resume value for this interrupt, given one decision (an Answer for a question)
        per ask, in order."""
        if self.shape == "question":
            return _resume_value(decisions[0])
        if self.shape == "hitl_batched":
            return {"decisions": [_decision(a, d) for a, d in zip(self.asks, decisions)]}
        if self.shape == "hitl_per_call":
            return _decision(self.asks[0], decisions[0])
        answer = _inbox_response(self.asks[0], decisions[0])
        return [answer] if self.as_list else answer


def read_request(value: Any, response_schema: Any, latest_calls: Sequence[dict[str, Any]]) -> Request:
    """``value`` (and ``response_schema``) of an interrupt as a Request. ``latest_calls`` are
    the tool calls of the graph's latest model answer: a batched request does not carry the
    calls' ids, so each action is matched to the call of the same name and arguments."""
    if isinstance(value, dict) and isinstance(value.get("action_requests"), list):
        return _batched(value, latest_calls)
    if isinstance(value, dict) and value.get("type") == "tool_approval" and isinstance(value.get("name"), str):
        return _per_call(value, response_schema)
    inbox = value[0] if isinstance(value, list) and len(value) == 1 else value
    if isinstance(inbox, dict) and isinstance(inbox.get("action_request"), dict):
        action = inbox["action_request"]
        if isinstance(action.get("action"), str):
            return _inbox(inbox, as_list=inbox is not value)
    offered = value.get("options") if isinstance(value, dict) else None
    options = tuple(str(o) for o in offered if isinstance(o, (str, int, float))) if isinstance(offered, list) else ()
    prompt = value if isinstance(value, str) else to_text(value)
    return Request("question", [Ask("", {}, "", prompt, frozenset({"approve", "reject"}), options=options)])


def _resume_value(d: ToolDecision | Answer) -> Any:
    """What a plain ``interrupt()`` returns: the answer's text (a JSON object or array when
    that is what was typed), or True / False for yes / no."""
    if isinstance(d, ToolDecision):
        return d.approved
    if d.outcome != "answer":
        return d.outcome == "approve"
    text = d.text.strip()
    if not d.option and text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return d.text


def _batched(value: dict[str, Any], latest_calls: Sequence[dict[str, Any]]) -> Request:
    configs = [c for c in value.get("review_configs") or [] if isinstance(c, dict)]
    allowed_for = {str(c.get("action_name")): frozenset(c.get("allowed_decisions") or ALL_DECISIONS) for c in configs}
    unmatched = list(latest_calls)
    asks = []
    for action in value["action_requests"]:
        action = action if isinstance(action, dict) else {}
        name = str(action.get("name", ""))
        args = dict(action.get("args") or {})
        call = next((c for c in unmatched if c.get("name") == name and dict(c.get("args") or {}) == args), None)
        if call is not None:
            unmatched.remove(call)
        asks.append(Ask(name, args, str(call.get("id") or "") if call else "", str(action.get("description") or ""), allowed_for.get(name, ALL_DECISIONS)))
    return Request("hitl_batched", asks)


def _per_call(value: dict[str, Any], schema: Any) -> Request:
    allowed = _allowed_by_schema(schema)
    ask = Ask(
        str(value["name"]),
        dict(value.get("args") or {}),
        str(value.get("tool_call_id") or ""),
        str(value.get("description") or ""),
        allowed,
        _edit_parameters(schema),
    )
    return Request("hitl_per_call", [ask])


def _inbox(value: dict[str, Any], *, as_list: bool) -> Request:
    action = value["action_request"]
    found = value.get("config")
    config: dict[str, Any] = found if isinstance(found, dict) else {}
    allowed = {
        decision
        for flag, decision in (("allow_accept", "approve"), ("allow_edit", "edit"), ("allow_respond", "respond"), ("allow_ignore", "reject"))
        if config.get(flag, flag != "allow_ignore")
    }
    ask = Ask(
        action["action"],
        dict(action.get("args") or {}),
        str(value.get("tool_call_id") or ""),
        str(value.get("description") or ""),
        frozenset(allowed),
    )
    return Request("inbox", [ask], as_list=as_list)


def _allowed_by_schema(schema: Any) -> frozenset[str]:
    """The decision types a per-call ``response_schema`` (JSON schema) accepts."""
    if not isinstance(schema, dict):
        return ALL_DECISIONS
    mapping = (schema.get("discriminator") or {}).get("mapping")
    if isinstance(mapping, dict) and mapping:
        return frozenset(str(k) for k in mapping)
    const = ((schema.get("properties") or {}).get("type") or {}).get("const")
    return frozenset({str(const)}) if const else ALL_DECISIONS


def _edit_parameters(schema: Any) -> dict[str, Any] | None:
    """The tool's argument schema inside a per-call ``response_schema``'s edit branch."""
    if not isinstance(schema, dict):
        return None
    for definition in (schema.get("$defs") or {}).values():
        args = ((definition or {}).get("properties") or {}).get("args")
        if isinstance(args, dict) and args.get("type") == "object" and "properties" in args:
            return args
    return None


def _decision(ask: Ask, d: ToolDecision | Answer) -> dict[str, Any]:
    """A LangChain ``Decision`` for ``d``, of a type ``ask`` allows."""
    if isinstance(d, Answer):  # a respond-only call, asked as a question
        return {"type": "respond", "message": d.for_model()}
    if d.approved:
        if d.arguments is not None and d.arguments != ask.args and "edit" in ask.allowed:
            return {"type": "edit", "edited_action": {"name": ask.tool_name, "args": d.arguments}}
        if "approve" in ask.allowed:
            return {"type": "approve"}
        if "edit" in ask.allowed:
            return {"type": "edit", "edited_action": {"name": ask.tool_name, "args": d.arguments or ask.args}}
        if "respond" in ask.allowed:
            return {"type": "respond", "message": YES}
        raise Unanswerable(f"the person approved {ask.tool_name}, but its review config allows only {_names(ask.allowed)}")
    if "reject" in ask.allowed:
        reason = d.reason if d.outcome == "reject" else d.denial_for_model(ask.tool_name)
        return {"type": "reject", "message": reason} if reason else {"type": "reject"}
    if "respond" in ask.allowed:
        return {"type": "respond", "message": d.denial_for_model(ask.tool_name)}
    raise Unanswerable(
        f"the call to {ask.tool_name} was not approved ({d.outcome}{': ' + d.reason if d.reason else ''}), but its review config "
        f"allows only {_names(ask.allowed)}: the graph cannot be told"
    )


def _inbox_response(ask: Ask, d: ToolDecision | Answer) -> dict[str, Any]:
    """An Agent Inbox ``HumanResponse`` for ``d``."""
    if isinstance(d, Answer):
        return {"type": "response", "args": d.for_model()}
    if d.approved:
        if d.arguments is not None and d.arguments != ask.args and "edit" in ask.allowed:
            return {"type": "edit", "args": {"action": ask.tool_name, "args": d.arguments}}
        if "approve" in ask.allowed:
            return {"type": "accept", "args": None}
        if "edit" in ask.allowed:
            return {"type": "edit", "args": {"action": ask.tool_name, "args": ask.args}}
        if "respond" in ask.allowed:
            return {"type": "response", "args": YES}
        raise Unanswerable(f"the person approved {ask.tool_name}, but the request allows only {_names(ask.allowed)}")
    if "respond" in ask.allowed:
        return {"type": "response", "args": d.denial_for_model(ask.tool_name)}
    if "reject" in ask.allowed:
        return {"type": "ignore", "args": None}
    raise Unanswerable(f"the call to {ask.tool_name} was not approved, but the request allows only {_names(ask.allowed)}")


def _names(allowed: frozenset[str]) -> str:
    return ", ".join(sorted(allowed)) or "nothing"
