"""Approvals and questions: asked, granted or rejected, decided (the ledger's entry), reminded,
expiring, escalated, reviewed; a question asked and answered."""

from __future__ import annotations

from typing import Any

from goldfive.clean import clean_map, clean_text, json_text
from goldfive.compat import fill_v1_approval
from goldfive.events._envelope import _stamp
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.types import Session

# The approval events (six per approved tool call with the tool's own step): an empty text
# field is left unset (proto3 reads it as ""), ASCII text (nearly all) is set without a call
# of clean_text, anything else goes through it (and a value that is not text still fails there).


def approval_requested(
    session: Session,
    *,
    target_id: str,
    kind: str,
    prompt: str = "",
    task_id: str = "",
    tool_name: str = "",
    args: dict[str, Any] | None = None,
    timeout_ms: int = 0,
    metadata: dict[str, str] | None = None,
    on_timeout: str = "",
    retry_of: str = "",
    parameters: dict[str, Any] | None = None,
    under_review: bool = False,
    args_json: str | None = None,
    parameters_json: str | None = None,
) -> pb.Event:
    """``args_json`` / ``parameters_json``: ``json_text`` of ``args`` / ``parameters`` when the
    caller made it already (the request's arguments for its ledger entry too; a tool's schema
    once per turn), used instead of dumping them again."""
    ev = pb.Event()
    a = ev.approval_requested
    a.under_review = under_review
    if on_timeout != "":
        a.on_timeout = on_timeout if on_timeout.__class__ is str and on_timeout.isascii() else clean_text(on_timeout)
    if retry_of != "":
        a.retry_of = retry_of if retry_of.__class__ is str and retry_of.isascii() else clean_text(retry_of)
    if parameters_json is not None:
        if parameters_json != "":
            a.parameters_json = parameters_json if parameters_json.__class__ is str and parameters_json.isascii() else clean_text(parameters_json)
    elif parameters:
        a.parameters_json = json_text(parameters)
    if target_id != "":
        a.target_id = target_id if target_id.__class__ is str and target_id.isascii() else clean_text(target_id)
    if kind != "":
        a.kind = kind if kind.__class__ is str and kind.isascii() else clean_text(kind)
    if prompt != "":
        a.prompt = prompt if prompt.__class__ is str and prompt.isascii() else clean_text(prompt)
    if task_id != "":
        a.task_id = task_id if task_id.__class__ is str and task_id.isascii() else clean_text(task_id)
    if tool_name != "":
        a.tool_name = tool_name if tool_name.__class__ is str and tool_name.isascii() else clean_text(tool_name)
    if args_json is not None:  # the caller's json_text(args), made once for the request and its ledger
        if args_json != "":
            a.args_json = args_json if args_json.__class__ is str and args_json.isascii() else clean_text(args_json)
    elif args is not None:
        a.args_json = json_text(args)
    a.timeout_ms = timeout_ms
    if metadata:
        a.metadata.update(clean_map(metadata))
    _stamp(session, ev)
    fill_v1_approval(a)
    return ev


def approval_granted(
    session: Session, target_id: str, detail: str = "", *, arguments: dict[str, Any] | None = None, rule_id: str = ""
) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_granted
    if target_id != "":
        p.target_id = target_id if target_id.__class__ is str and target_id.isascii() else clean_text(target_id)
    if detail != "":
        p.detail = detail if detail.__class__ is str and detail.isascii() else clean_text(detail)
    if arguments is not None:
        p.arguments_json = json_text(arguments)
    if rule_id != "":
        p.rule_id = rule_id if rule_id.__class__ is str and rule_id.isascii() else clean_text(rule_id)
    return _stamp(session, ev)


def approval_rejected(session: Session, target_id: str, detail: str = "", *, timed_out: bool = False) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_rejected
    if target_id != "":
        p.target_id = target_id if target_id.__class__ is str and target_id.isascii() else clean_text(target_id)
    if detail != "":
        p.detail = detail if detail.__class__ is str and detail.isascii() else clean_text(detail)
    p.timed_out = timed_out
    return _stamp(session, ev)


def approval_decided(
    session: Session,
    *,
    target_id: str,
    outcome: str,
    author: str = "",
    client: str = "",
    kind: str = "tool",
    task_id: str = "",
    tool_name: str = "",
    requested_args: dict[str, Any] | None = None,
    ran_args: dict[str, Any] | None = None,
    reason: str = "",
    rule_id: str = "",
    rule_author: str = "",
    rule_made_at_ms: int = 0,
    control_id: str = "",
    requested_args_json: str | None = None,
) -> pb.Event:
    """One decision on an approval, for the ledger: who, through which client, what ran.

    ``requested_args_json``: ``json_text(requested_args)`` when the caller made it already
    (the request's); ``ran_args`` that are the requested ones (the same object) reuse it."""
    ev = pb.Event()
    p = ev.approval_decided
    if target_id != "":
        p.target_id = target_id if target_id.__class__ is str and target_id.isascii() else clean_text(target_id)
    if outcome != "":
        p.outcome = outcome if outcome.__class__ is str and outcome.isascii() else clean_text(outcome)
    if author != "":
        p.author = author if author.__class__ is str and author.isascii() else clean_text(author)
    if client != "":
        p.client = client if client.__class__ is str and client.isascii() else clean_text(client)
    if kind != "":
        p.kind = kind if kind.__class__ is str and kind.isascii() else clean_text(kind)
    if task_id != "":
        p.task_id = task_id if task_id.__class__ is str and task_id.isascii() else clean_text(task_id)
    if tool_name != "":
        p.tool_name = tool_name if tool_name.__class__ is str and tool_name.isascii() else clean_text(tool_name)
    asked = None
    if requested_args_json is not None:
        p.requested_args_json = asked = clean_text(requested_args_json)
    elif requested_args is not None:
        p.requested_args_json = asked = json_text(requested_args)
    if ran_args is not None:
        p.ran_args_json = asked if asked is not None and ran_args is requested_args else json_text(ran_args)
    if reason != "":
        p.reason = reason if reason.__class__ is str and reason.isascii() else clean_text(reason)
    if rule_id != "":
        p.rule_id = rule_id if rule_id.__class__ is str and rule_id.isascii() else clean_text(rule_id)
    if rule_author != "":
        p.rule_author = rule_author if rule_author.__class__ is str and rule_author.isascii() else clean_text(rule_author)
    p.rule_made_at_ms = rule_made_at_ms
    if control_id != "":
        p.control_id = control_id if control_id.__class__ is str and control_id.isascii() else clean_text(control_id)
    return _stamp(session, ev)


def approval_expiring(session: Session, target_id: str, *, ms_left: int, on_timeout: str) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_expiring
    p.target_id = clean_text(target_id)
    p.ms_left = ms_left
    p.on_timeout = clean_text(on_timeout)
    return _stamp(session, ev)


def approval_reminded(session: Session, target_id: str, *, waited_ms: int, reminder: int) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_reminded
    p.target_id = clean_text(target_id)
    p.waited_ms = waited_ms
    p.reminder = reminder
    return _stamp(session, ev)


def question_asked(
    session: Session,
    *,
    target_id: str,
    prompt: str,
    task_id: str = "",
    options: tuple[str, ...] | list[str] = (),
    free_text: bool = True,
    timeout_ms: int = 0,
    on_timeout: str = "",
) -> pb.Event:
    ev = pb.Event()
    p = ev.question_asked
    p.target_id = clean_text(target_id)
    p.task_id = clean_text(task_id)
    p.prompt = clean_text(prompt)
    p.options.extend(clean_text(o) for o in options)
    p.free_text = free_text
    p.timeout_ms = timeout_ms
    p.on_timeout = clean_text(on_timeout)
    return _stamp(session, ev)


def question_answered(
    session: Session, target_id: str, *, outcome: str, text: str = "", option: str = "", author: str = "", client: str = ""
) -> pb.Event:
    ev = pb.Event()
    p = ev.question_answered
    p.target_id = clean_text(target_id)
    p.outcome = clean_text(outcome)
    p.text = clean_text(text)
    p.option = clean_text(option)
    p.author = clean_text(author)
    p.client = clean_text(client)
    return _stamp(session, ev)


def approval_escalated(session: Session, target_id: str, *, waited_ms: int, why: str) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_escalated
    p.target_id = clean_text(target_id)
    p.waited_ms = waited_ms
    p.why = clean_text(why)
    return _stamp(session, ev)


def approval_reviewed(
    session: Session, target_id: str, *, decision: str, reason: str, error: str = "", grace_ms: int = 0, model: str = ""
) -> pb.Event:
    ev = pb.Event()
    p = ev.approval_reviewed
    p.target_id = clean_text(target_id)
    p.decision = clean_text(decision)
    p.reason = clean_text(reason)
    p.error = clean_text(error)
    p.grace_ms = grace_ms
    p.model = clean_text(model)
    return _stamp(session, ev)
