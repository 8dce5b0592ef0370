"""Typed control payloads: each kind's payload decoded into its class once, where a control
enters the run, and refused with a reason naming the field when it does not fit."""

from __future__ import annotations

from typing import Any

import pytest

from goldfive.control import AckResult, AppliedAs, ControlKind, ControlMessage
from goldfive.controls import (
    PAYLOAD_TYPES,
    RULES_VERB,
    Always,
    Answer,
    ApprovalRules,
    BudgetSet,
    Approve,
    Cancel,
    ControlPayload,
    ControlPayloadError,
    Custom,
    GoldfivePauseEscalate,
    GoldfiveSteer,
    Inject,
    InterceptTransfer,
    Pause,
    Reject,
    Resume,
    Rewind,
    StatusQuery,
    Steer,
    SteerQueue,
    SteerQueueOp,
    SteerWhen,
    Guidance,
    GuidanceOp,
    decode,
    decode_payload,
    message,
)
from goldfive.run.validate import accept, validate_control
from tests.runtime_kit import Harness, ScriptedAgent, executor, static  # noqa: F401

WHO = {"author": "ann", "client": "tui"}

#: kind, a payload as a client sends it, the class instance it decodes to.
GOOD: list[tuple[ControlKind | str, dict[str, Any], ControlPayload]] = [
    (ControlKind.PAUSE, WHO, Pause(author="ann", client="tui")),
    (ControlKind.RESUME, WHO, Resume(author="ann", client="tui")),
    (ControlKind.CANCEL, {"reason": "wrong goal"}, Cancel(reason="wrong goal")),
    (
        ControlKind.STEER,
        {"note": "fewer slides", "suggested_action": "drop research", "annotation_id": "an-1", **WHO},
        Steer(note="fewer slides", suggested_action="drop research", annotation_id="an-1", author="ann", client="tui"),
    ),
    (ControlKind.REWIND_TO, {"task_id": "t2"}, Rewind(task_id="t2")),
    (
        ControlKind.APPROVE,
        {"target_id": "adk-1", "detail": "ok", "arguments": {"slides": 6}, "always": {"scope": "machine", "match": {}}},
        Approve(target_id="adk-1", detail="ok", arguments={"slides": 6}, always=Always("machine")),
    ),
    (ControlKind.REJECT, {"target_id": "t3", "detail": "no"}, Reject(target_id="t3", detail="no")),
    (ControlKind.STATUS_QUERY, {}, StatusQuery()),
    (ControlKind.INTERCEPT_TRANSFER, {"enabled": False}, InterceptTransfer(enabled=False)),
    (ControlKind.INJECT_MESSAGE, {"text": "use the 2024 figures"}, Inject(text="use the 2024 figures", role="user")),
    (ControlKind.GOLDFIVE_STEER, {"note": "stop looping", "drift_id": "d1"}, GoldfiveSteer(note="stop looping", drift_id="d1")),
    (
        ControlKind.GOLDFIVE_PAUSE_ESCALATE,
        {"reason": "stuck", "drift_id": "d2", "deadline_s": 600},
        GoldfivePauseEscalate(reason="stuck", drift_id="d2", deadline_s=600.0),
    ),
    (RULES_VERB, {"op": "remove", "rule_id": "R1"}, ApprovalRules(op="remove", rule_id="R1")),
    (ControlKind.ANSWER, {"target_id": "q-1", "option": "eu", **WHO}, Answer(target_id="q-1", option="eu", author="ann", client="tui")),
    (ControlKind.STEER, {"note": "later on", "when": "LATER"}, Steer(note="later on", when=SteerWhen.LATER)),
    (ControlKind.STEER, {"note": "always", "standing": True}, Steer(note="always", standing=True)),
    (ControlKind.STEER_QUEUE, {"op": "edit", "note_id": "q1", "text": "new"}, SteerQueue(op=SteerQueueOp.EDIT, note_id="q1", text="new")),
    (ControlKind.GUIDANCE, {"op": "remove", "id": "g1"}, Guidance(op=GuidanceOp.REMOVE, id="g1")),


    (ControlKind.BUDGET, {"tokens": 100_000, "usd": "$2.5", "resume": True}, BudgetSet(tokens=100_000, usd=2.5, resume=True)),
    ("CHECKPOINT", {"label": "pre-refine", "author": "bo"}, Custom(author="bo")),
]

#: kind, a malformed payload, the field the refusal names, words it says.
BAD: list[tuple[ControlKind | str, dict[str, Any], str, str]] = [
    (ControlKind.PAUSE, {"author": 7}, "author", "PAUSE payload.author must be text, got a number"),
    (ControlKind.RESUME, {"client": ["tui"]}, "client", "RESUME payload.client must be text, got a list"),
    (ControlKind.CANCEL, {"reason": {"why": "x"}}, "reason", "CANCEL payload.reason must be text, got an object"),
    (ControlKind.STEER, {"note": 5}, "note", "STEER payload.note must be text, got a number"),
    (ControlKind.STEER, {"note": "n", "annotation_id": True}, "annotation_id", "payload.annotation_id must be text"),
    (ControlKind.REWIND_TO, {}, "task_id", "REWIND_TO needs payload.task_id"),
    (ControlKind.REWIND_TO, {"task_id": 3}, "task_id", "REWIND_TO payload.task_id must be text"),
    (ControlKind.APPROVE, {"detail": "ok"}, "target_id", "APPROVE needs payload.target_id"),
    (ControlKind.APPROVE, {"target_id": "t", "arguments": [1]}, "arguments", "APPROVE payload.arguments must be a JSON object"),
    (ControlKind.APPROVE, {"target_id": "t", "always": "yes"}, "always", "APPROVE payload.always must be an object"),
    (ControlKind.APPROVE, {"target_id": "t", "always": {"scope": "galaxy"}}, "always", "always.scope must be 'run' or 'machine'"),
    (ControlKind.REJECT, {"target_id": ""}, "target_id", "REJECT needs payload.target_id"),
    (ControlKind.STATUS_QUERY, {"author": False}, "author", "STATUS_QUERY payload.author must be text, got a boolean"),
    (ControlKind.INTERCEPT_TRANSFER, {"enabled": "false"}, "enabled", "INTERCEPT_TRANSFER payload.enabled must be true or false"),
    (ControlKind.INJECT_MESSAGE, {"text": "t", "role": 1}, "role", "INJECT_MESSAGE payload.role must be text"),
    (ControlKind.GOLDFIVE_STEER, {"note": 1}, "note", "GOLDFIVE_STEER payload.note must be text"),
    (ControlKind.GOLDFIVE_PAUSE_ESCALATE, {"deadline_s": -1}, "deadline_s", "must be a positive number of seconds"),
    (ControlKind.GOLDFIVE_PAUSE_ESCALATE, {"deadline_s": "60"}, "deadline_s", "must be a positive number of seconds, got text"),
    (RULES_VERB, {"op": "add", "rule": "tool=x"}, "rule", "APPROVAL_RULES payload.rule must be a JSON object"),
    (ControlKind.ANSWER, {"text": "eu"}, "target_id", "ANSWER needs payload.target_id"),
    (ControlKind.ANSWER, {"target_id": "q-1", "option": ["eu"]}, "option", "ANSWER payload.option must be text, got a list"),
    (ControlKind.STEER, {"note": "n", "when": "soon"}, "when", "STEER payload.when must be one of now|later, got 'soon'"),
    (ControlKind.STEER, {"note": "n", "standing": "yes"}, "standing", "STEER payload.standing must be true or false"),
    (ControlKind.STEER, {"note": "n", "when": "later", "standing": True}, "when", "cannot be combined"),
    (ControlKind.STEER_QUEUE, {"op": "withdraw"}, "note_id", "STEER_QUEUE withdraw needs payload.note_id"),
    (ControlKind.STEER_QUEUE, {"op": 3}, "op", "STEER_QUEUE payload.op must be text"),
    (ControlKind.GUIDANCE, {"op": "remove"}, "id", "GUIDANCE remove needs payload.id"),
    (ControlKind.GUIDANCE, {"op": "drop", "id": "g1"}, "op", "must be one of list|remove|make_standing"),


    (ControlKind.BUDGET, {"resume": True}, "tokens", "BUDGET needs at least one limit"),
    (ControlKind.BUDGET, {"tokens": -5}, "tokens", "BUDGET payload.tokens must be a number, 0 or more (0: no limit), got a number"),
    (ControlKind.BUDGET, {"usd": "lots"}, "usd", "BUDGET payload.usd: budget usd=lots: not a number"),
    (ControlKind.BUDGET, {"tokens": 1.5}, "tokens", "BUDGET payload.tokens must be a whole number"),
]


def test_every_known_kind_has_a_payload_class_and_every_case_is_covered() -> None:
    assert set(PAYLOAD_TYPES) == set(ControlKind) | {RULES_VERB}
    assert {type(want) for _, _, want in GOOD} == set(PAYLOAD_TYPES.values()) | {Custom}
    assert {kind for kind, _, _, _ in BAD} == set(PAYLOAD_TYPES)


@pytest.mark.parametrize(("kind", "payload", "want"), GOOD, ids=[str(k) for k, _, _ in GOOD])
def test_each_kind_decodes_into_its_class(kind: ControlKind | str, payload: dict[str, Any], want: ControlPayload) -> None:
    msg = ControlMessage(kind, payload=payload)
    control = decode(msg)
    assert control.payload == want and control.message is msg and control.id == msg.id
    assert accept(msg).payload == want  # the run's edge: the same decode, plus the limits


@pytest.mark.parametrize(("kind", "payload", "want"), [g for g in GOOD if not isinstance(g[2], Custom)], ids=lambda v: str(v)[:20])
def test_a_typed_payload_builds_the_message_a_client_sends(kind: ControlKind | str, payload: dict[str, Any], want: ControlPayload) -> None:
    msg = message(want)
    assert msg.kind == kind
    assert decode(msg).payload == want


@pytest.mark.parametrize(("kind", "payload", "key", "words"), BAD, ids=[f"{k}-{f}" for k, _, f, _ in BAD])
def test_a_malformed_payload_is_refused_naming_the_field(kind: ControlKind | str, payload: dict[str, Any], key: str, words: str) -> None:
    msg = ControlMessage(kind, payload=payload)
    with pytest.raises(ControlPayloadError) as err:
        decode(msg)
    assert err.value.key == key and words in str(err.value)
    assert words in validate_control(msg)


def test_null_means_absent_and_unknown_keys_are_ignored() -> None:
    assert decode_payload(ControlKind.STEER, {"note": "n", "author": None, "colour": "red"}) == Steer(note="n")
    assert decode_payload(ControlKind.INTERCEPT_TRANSFER, {"enabled": None}) == InterceptTransfer(enabled=True)
    assert decode_payload(ControlKind.INJECT_MESSAGE, {"text": "t", "role": ""}).role == "user"  # type: ignore[attr-defined]
    assert decode_payload(ControlKind.APPROVE, {"target_id": "t", "always": True}) == Approve(target_id="t", always=Always())


def test_a_decoded_payload_cannot_be_changed_afterwards() -> None:
    payload = {"target_id": "t", "arguments": {"slides": 6}}
    approve = decode_payload(ControlKind.APPROVE, payload)
    assert isinstance(approve, Approve) and approve.arguments is not None
    payload["arguments"]["slides"] = 60  # the sender's dict, changed after the decode
    assert approve.arguments["slides"] == 6
    with pytest.raises(TypeError):
        approve.arguments["slides"] = 7  # type: ignore[index]


# -- at the run's edge: one FAILURE ack naming the field, the run goes on ---------------------


@pytest.mark.parametrize(
    ("kind", "payload", "words"),
    [
        (ControlKind.STEER, {"note": 42}, "STEER payload.note must be text, got a number"),
        (ControlKind.INTERCEPT_TRANSFER, {"enabled": "no"}, "payload.enabled must be true or false"),
        (ControlKind.APPROVE, {"target_id": "t", "arguments": "slides=6"}, "payload.arguments must be a JSON object"),
        (ControlKind.CANCEL, {"reason": 7}, "CANCEL payload.reason must be text"),
    ],
)
async def test_the_run_acks_a_malformed_payload_failure_and_goes_on(
    executor: Any, kind: ControlKind, payload: dict[str, Any], words: str
) -> None:
    h = Harness(ScriptedAgent(), executor, static("a", "b"))
    bad = await h.send(kind, **payload)
    h.start()
    out = await h.finish()
    (ack,) = h.acks[bad.id]
    assert out.success, "a refused CANCEL must not cancel the run"
    assert (ack.result, ack.applied_as) == (AckResult.FAILURE, AppliedAs.REFUSED) and words in ack.detail
    recorded = [e.control_acked.ack for e in h.events if e.WhichOneof("payload") == "control_acked"]
    assert [a.detail for a in recorded if a.control_id == bad.id] == [ack.detail]
