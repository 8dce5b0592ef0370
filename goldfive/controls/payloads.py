"""One frozen class per control kind's payload, and ``decode``: the one place a control's
``payload: dict`` (the spec's ControlMessage) becomes typed.

The run decodes each control once, where it enters (the ControlLoop), and hands the typed
``Control`` to its handler; a payload that does not fit is refused there with a reason naming
the field (``STEER payload.note must be text, got int``), never half-read. Keys a kind does not
know are ignored (a newer client may send more); a key that is present with JSON ``null`` is
taken as absent. ``to_payload`` goes back to the dict a ControlMessage carries, so a client can
build its messages from these classes too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar, Generic, TypeVar

from goldfive.control import ControlKind, ControlMessage, kind_name
from goldfive.controls.reader import Convert, as_flag, as_object, as_seconds, as_text, read_fields, refuse, type_name
from goldfive.errors import ControlPayloadError

__all__ = [
    "RULES_VERB",
    "Always",
    "Answer",
    "Approve",
    "ApprovalRules",
    "BudgetSet",
    "Cancel",
    "Control",
    "ControlPayload",
    "Custom",
    "GoldfivePauseEscalate",
    "GoldfiveSteer",
    "Guidance",
    "GuidanceOp",
    "Inject",
    "InterceptTransfer",
    "PAYLOAD_TYPES",
    "Pause",
    "Reject",
    "Resume",
    "Rewind",
    "StatusQuery",
    "Steer",
    "SteerQueue",
    "SteerQueueOp",
    "SteerWhen",
    "decode",
    "decode_payload",
    "message",
]

#: The custom verb (docs/protocol.md#custom-controls) that lists, adds and removes a run's approval rules. Through the
#: control channel, so every change is in the run's audit trail and holds from the next call.
RULES_VERB = "approval_rules"


# -- the payloads ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlPayload:
    """What every kind may carry: who sent it (the front end or the hub sets ``author``) and
    through which client ("tui", "ctl", "web")."""

    KIND: ClassVar[ControlKind | str] = ""
    #: The payload keys this class reads, each with its conversion; ``NEEDS``: the text
    #: fields that may not be blank.
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (("author", as_text), ("client", as_text))
    NEEDS: ClassVar[tuple[str, ...]] = ()
    author: str = ""
    client: str = ""

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], kind: ControlKind | str = "") -> ControlPayload:
        return cls(**read_fields(kind or cls.KIND, payload, cls.FIELDS, cls.NEEDS))

    @property
    def summary(self) -> str:
        """One line for a person: the note, the task, the target."""
        return ""

    @property
    def reads_only(self) -> bool:
        """A question that changes nothing (listing rules): acked to its sender, never
        written into the run's history. Every control that changes something is recorded."""
        return False

    def to_payload(self) -> dict[str, Any]:
        """The ControlMessage payload dict: every field that differs from its default."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default and value is not None:
                out[f.name] = _plain(value)
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Always):
        return {"scope": value.scope, "match": _plain(value.match)}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, StrEnum):
        return value.value
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Pause(ControlPayload):
    KIND: ClassVar[ControlKind | str] = ControlKind.PAUSE


@dataclass(frozen=True, slots=True, kw_only=True)
class Resume(ControlPayload):
    KIND: ClassVar[ControlKind | str] = ControlKind.RESUME


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancel(ControlPayload):
    KIND: ClassVar[ControlKind | str] = ControlKind.CANCEL
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (*ControlPayload.FIELDS, ("reason", as_text))
    reason: str = ""

    @property
    def summary(self) -> str:
        return self.reason

    @property
    def why(self) -> str:
        """The reason the run is aborted with."""
        return self.reason or "cancelled by control"


E = TypeVar("E", bound=StrEnum)


def _one_of(enum: type[E]) -> Convert:
    """Text that is one of ``enum``'s values (case-insensitive)."""
    choices = "|".join(m.value for m in enum)

    def convert(kind: ControlKind | str, key: str, value: Any) -> E:
        text = as_text(kind, key, value).strip().lower()
        try:
            return enum(text)
        except ValueError:
            raise ControlPayloadError(f"{kind_name(kind)} payload.{key} must be one of {choices}, got {text!r}", key) from None

    return convert


class SteerWhen(StrEnum):
    """When a STEER is applied: ``now`` (delete-and-replan at once) or ``later`` (queued, and
    delivered when the next task starts)."""

    NOW = "now"
    LATER = "later"


@dataclass(frozen=True, slots=True, kw_only=True)
class Steer(ControlPayload):
    """Spec 1.b. ``annotation_id`` is the idempotency key when set (spec 1.c). ``when`` and
    ``standing`` (docs/protocol.md#steer-later-and-standing): queue the note for the next task,
    or keep it in every later task's input."""

    KIND: ClassVar[ControlKind | str] = ControlKind.STEER
    # A blank note is refused by validate_control, with the note's own limits.
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (
        *ControlPayload.FIELDS, ("note", as_text), ("suggested_action", as_text), ("annotation_id", as_text),
        ("when", _one_of(SteerWhen)), ("standing", as_flag),
    )  # fmt: skip
    note: str = ""
    suggested_action: str = ""
    annotation_id: str = ""
    when: SteerWhen = SteerWhen.NOW
    standing: bool = False

    def __post_init__(self) -> None:
        if self.standing and self.when is SteerWhen.LATER:
            raise ControlPayloadError(
                "STEER: a standing note applies from the next task on; payload.when 'later' and payload.standing cannot be combined",
                "when",
            )

    @property
    def summary(self) -> str:
        if self.standing:
            return f"[standing] {self.note}"
        return f"[after this task] {self.note}" if self.when is SteerWhen.LATER else self.note

    def dedupe_id(self, control_id: str) -> str:
        """The id retries of this STEER share: its annotation, else the control's id."""
        return self.annotation_id or control_id


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewind(ControlPayload):
    KIND: ClassVar[ControlKind | str] = ControlKind.REWIND_TO
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (*ControlPayload.FIELDS, ("task_id", as_text))
    NEEDS: ClassVar[tuple[str, ...]] = ("task_id",)
    task_id: str

    @property
    def summary(self) -> str:
        return self.task_id


@dataclass(frozen=True, slots=True)
class Always:
    """An APPROVE's "and always": a rule for calls like this one, for the run or the machine.
    ``match`` maps an argument name to a matcher (``goldfive.approvals.rules``); empty: every call."""

    scope: str = "run"
    match: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def read(cls, kind: ControlKind | str, key: str, value: Any) -> Always | None:
        if value is False:
            return None
        if value is True:
            return cls()
        raw = _ALWAYS(kind, key, value)
        scope = as_text(kind, "always.scope", raw.get("scope") or "run")
        if scope not in ("run", "machine"):
            raise ControlPayloadError(f"{kind_name(kind)} payload.always.scope must be 'run' or 'machine', got {scope!r}", key)
        match = raw.get("match")
        return cls(scope, _MATCH(kind, "always.match", match) if match is not None else MappingProxyType({}))


_ALWAYS = as_object('an object: {"scope": "run"|"machine", "match": {...}}')
_MATCH = as_object("an object of argument matchers")


@dataclass(frozen=True, slots=True, kw_only=True)
class Approve(ControlPayload):
    """Spec 6. ``arguments``: the call's edited arguments (a tool approval only);
    ``always``: also make a rule for calls like it."""

    KIND: ClassVar[ControlKind | str] = ControlKind.APPROVE
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (
        *ControlPayload.FIELDS, ("target_id", as_text), ("detail", as_text),
        ("arguments", as_object("a JSON object (the call's edited arguments)")), ("always", Always.read),
    )  # fmt: skip
    NEEDS: ClassVar[tuple[str, ...]] = ("target_id",)
    target_id: str
    detail: str = ""
    arguments: Mapping[str, Any] | None = None
    always: Always | None = None

    @property
    def summary(self) -> str:
        return f"{self.target_id}: {self.detail}" if self.detail else self.target_id


@dataclass(frozen=True, slots=True, kw_only=True)
class Reject(ControlPayload):
    KIND: ClassVar[ControlKind | str] = ControlKind.REJECT
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (*ControlPayload.FIELDS, ("target_id", as_text), ("detail", as_text))
    NEEDS: ClassVar[tuple[str, ...]] = ("target_id",)
    target_id: str
    detail: str = ""

    @property
    def summary(self) -> str:
        return f"{self.target_id}: {self.detail}" if self.detail else self.target_id


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer(ControlPayload):
    """ANSWER (docs/protocol.md#answer): answer the pending question ``target_id`` with
    ``text`` (typed) or ``option`` (one of the options it offered); exactly one of them."""

    KIND: ClassVar[ControlKind | str] = ControlKind.ANSWER
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (
        *ControlPayload.FIELDS, ("target_id", as_text), ("text", as_text), ("option", as_text),
    )  # fmt: skip
    NEEDS: ClassVar[tuple[str, ...]] = ("target_id",)
    target_id: str
    text: str = ""
    option: str = ""

    @property
    def summary(self) -> str:
        return f"{self.target_id}: {self.option or self.text}"


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusQuery(ControlPayload):
    KIND: ClassVar[ControlKind | str] = ControlKind.STATUS_QUERY


@dataclass(frozen=True, slots=True, kw_only=True)
class InterceptTransfer(ControlPayload):
    KIND: ClassVar[ControlKind | str] = ControlKind.INTERCEPT_TRANSFER
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (*ControlPayload.FIELDS, ("enabled", as_flag))
    enabled: bool = True

    @property
    def summary(self) -> str:
        return "on" if self.enabled else "off"


def _role(kind: ControlKind | str, key: str, value: Any) -> str:
    return as_text(kind, key, value) or "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class Inject(ControlPayload):
    """INJECT_MESSAGE (docs/protocol.md#inject_message): ``text`` delivered into the running turn, or the next one."""

    KIND: ClassVar[ControlKind | str] = ControlKind.INJECT_MESSAGE
    # A blank text is refused by validate_control, with the message's own limits.
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (*ControlPayload.FIELDS, ("text", as_text), ("role", _role))
    text: str = ""
    role: str = "user"

    @property
    def summary(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True, kw_only=True)
class GoldfiveSteer(ControlPayload):
    """The ladder's CANCEL_REINVOKE (docs/protocol.md#the-intervention-ladder): restart the invocation with a corrective."""

    KIND: ClassVar[ControlKind | str] = ControlKind.GOLDFIVE_STEER
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (*ControlPayload.FIELDS, ("note", as_text), ("drift_id", as_text))
    note: str = ""
    drift_id: str = ""

    @property
    def summary(self) -> str:
        return self.note


@dataclass(frozen=True, slots=True, kw_only=True)
class GoldfivePauseEscalate(ControlPayload):
    """The ladder's PAUSE_ESCALATE / TERMINATE (docs/protocol.md#the-intervention-ladder): pause for a person, with a deadline
    for TERMINATE."""

    KIND: ClassVar[ControlKind | str] = ControlKind.GOLDFIVE_PAUSE_ESCALATE
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (
        *ControlPayload.FIELDS, ("reason", as_text), ("drift_id", as_text), ("deadline_s", as_seconds),
    )  # fmt: skip
    reason: str = ""
    drift_id: str = ""
    deadline_s: float | None = None

    @property
    def summary(self) -> str:
        return self.reason


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRules(ControlPayload):
    """The ``approval_rules`` verb: ``op`` list, add (with ``rule``) or remove (``rule_id``)."""

    KIND: ClassVar[ControlKind | str] = RULES_VERB
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (
        *ControlPayload.FIELDS, ("op", as_text), ("rule", as_object("a JSON object")), ("rule_id", as_text),
    )  # fmt: skip
    op: str = ""
    rule: Mapping[str, Any] | None = None
    rule_id: str = ""

    @property
    def summary(self) -> str:
        return " ".join(p for p in (self.op, self.rule_id) if p)

    @property
    def reads_only(self) -> bool:
        return self.op == "list"


class SteerQueueOp(StrEnum):
    LIST = "list"
    EDIT = "edit"
    WITHDRAW = "withdraw"
    UP = "up"
    DOWN = "down"
    HOLD = "hold"
    RELEASE = "release"


@dataclass(frozen=True, slots=True, kw_only=True)
class SteerQueue(ControlPayload):
    """STEER_QUEUE (docs/protocol.md#steer_queue): change one note of the queue of STEERs sent
    "after this task": ``edit`` (its ``text``), ``withdraw``, move ``up`` / ``down``, ``hold``
    (not delivered until ``release``); or ``list`` the queue."""

    KIND: ClassVar[ControlKind | str] = ControlKind.STEER_QUEUE
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (
        *ControlPayload.FIELDS, ("op", _one_of(SteerQueueOp)), ("note_id", as_text), ("text", as_text),
    )  # fmt: skip
    op: SteerQueueOp = SteerQueueOp.LIST
    note_id: str = ""
    text: str = ""

    def __post_init__(self) -> None:
        if self.op is not SteerQueueOp.LIST and not self.note_id.strip():
            raise ControlPayloadError(f"STEER_QUEUE {self.op} needs payload.note_id", "note_id")

    @property
    def summary(self) -> str:
        return " ".join(p for p in (str(self.op), self.note_id, self.text) if p)


class GuidanceOp(StrEnum):
    LIST = "list"
    REMOVE = "remove"
    MAKE_STANDING = "make_standing"


@dataclass(frozen=True, slots=True, kw_only=True)
class Guidance(ControlPayload):
    """GUIDANCE (docs/protocol.md#guidance): ``list`` the standing notes, ``remove`` one by its
    ``id``, or ``make_standing`` an earlier STEER (its control ``id``) or a queued note (its
    ``id``)."""

    KIND: ClassVar[ControlKind | str] = ControlKind.GUIDANCE
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (*ControlPayload.FIELDS, ("op", _one_of(GuidanceOp)), ("id", as_text))
    op: GuidanceOp = GuidanceOp.LIST
    id: str = ""

    def __post_init__(self) -> None:
        if self.op is not GuidanceOp.LIST and not self.id.strip():
            raise ControlPayloadError(f"GUIDANCE {self.op} needs payload.id", "id")

    @property
    def summary(self) -> str:
        return " ".join(p for p in (str(self.op), self.id) if p)


def _limit(kind: ControlKind | str, key: str, value: Any) -> float:
    """A BUDGET limit: a number (0: no limit) or how ``--budget`` writes one ("50k", "none")."""
    from goldfive.budget.model import BudgetError, read_value

    if isinstance(value, str):
        try:
            read = read_value(key, value)
        except BudgetError as exc:
            raise ControlPayloadError(f"{kind_name(kind)} payload.{key}: {exc}", key) from None
        return 0.0 if read is None else float(read)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0 or value == float("inf"):
        raise refuse(kind, key, "a number, 0 or more (0: no limit)", value)
    return float(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetSet(ControlPayload):
    """BUDGET (docs/cost.md#budgets): the limits given replace the run's (0: that limit goes);
    those left out stay. ``resume``: also go on, when the new budget allows it."""

    KIND: ClassVar[ControlKind | str] = ControlKind.BUDGET
    FIELDS: ClassVar[tuple[tuple[str, Convert], ...]] = (
        *ControlPayload.FIELDS, ("tokens", _limit), ("usd", _limit), ("model_calls", _limit), ("tool_calls", _limit),
        ("seconds", _limit), ("resume", as_flag),
    )  # fmt: skip
    tokens: float | None = None
    usd: float | None = None
    model_calls: float | None = None
    tool_calls: float | None = None
    seconds: float | None = None
    resume: bool = False

    def __post_init__(self) -> None:
        if not self.changes():
            raise ControlPayloadError(
                "BUDGET needs at least one limit: tokens, usd, model_calls, tool_calls or seconds (0: no limit)", "tokens"
            )
        for key in ("tokens", "model_calls", "tool_calls"):
            value = getattr(self, key)
            if value is not None and value != int(value):
                raise ControlPayloadError(f"BUDGET payload.{key} must be a whole number, got {value!r}", key)

    def changes(self) -> dict[str, float | int | None]:
        """The limits this control changes: name -> the new value, None to remove it."""
        out: dict[str, float | int | None] = {}
        for key in ("tokens", "usd", "model_calls", "tool_calls", "seconds"):
            value = getattr(self, key)
            if value is None:
                continue
            if not value:
                out[key] = None
            else:
                out[key] = int(value) if key in ("tokens", "model_calls", "tool_calls") else value
        return out

    @property
    def summary(self) -> str:
        parts = [f"{k}={'none' if v is None else (int(v) if float(v) == int(v) else v)}" for k, v in self.changes().items()]
        return ",".join(parts) + (" and resume" if self.resume else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class Custom(ControlPayload):
    """A kind goldfive has no class for (docs/protocol.md#custom-controls): an executor's ``_handle_custom`` reads the
    message's payload itself."""


#: Kind -> its payload class. A kind not here decodes to ``Custom``.
PAYLOAD_TYPES: Mapping[ControlKind | str, type[ControlPayload]] = MappingProxyType(
    {
        cls.KIND: cls
        for cls in (
            Pause, Resume, Cancel, Steer, Rewind, Approve, Reject, StatusQuery, InterceptTransfer, Inject,
            GoldfiveSteer, GoldfivePauseEscalate, ApprovalRules, Answer, SteerQueue, Guidance, BudgetSet,
        )
    }
)  # fmt: skip

P = TypeVar("P", bound=ControlPayload, covariant=True)


@dataclass(frozen=True, slots=True)
class Control(Generic[P]):
    """A control as the run handles it: the message as sent (recorded, and handed to a spec
    7.b custom handler) and its payload, decoded once."""

    message: ControlMessage
    payload: P

    @property
    def id(self) -> str:
        return self.message.id

    @property
    def kind(self) -> ControlKind | str:
        return self.message.kind

    @property
    def kind_name(self) -> str:
        return kind_name(self.message.kind)


#: Payload class -> its instance for an empty payload (None: an empty payload is refused).
#: Most controls a person sends (PAUSE, RESUME, STATUS_QUERY) carry nothing: read once.
_EMPTY: dict[type[ControlPayload], ControlPayload | None] = {}
_UNREAD = object()
#: PAYLOAD_TYPES as a plain dict, for the lookup every control makes.
_TYPES: dict[ControlKind | str, type[ControlPayload]] = dict(PAYLOAD_TYPES)


def decode_payload(kind: ControlKind | str, payload: Mapping[str, Any] | None) -> ControlPayload:
    """The typed payload of a control of ``kind``. Raises ControlPayloadError naming the field."""
    cls = _TYPES.get(kind, Custom)
    if payload:
        if type(payload) is not dict and not isinstance(payload, Mapping):
            raise ControlPayloadError(f"payload must be a JSON object, got {type_name(payload)}", "")
        return cls(**read_fields(kind, payload, cls.FIELDS, cls.NEEDS))
    if payload is not None and type(payload) is not dict and not isinstance(payload, Mapping):
        raise ControlPayloadError(f"payload must be a JSON object, got {type_name(payload)}", "")
    empty = _EMPTY.get(cls, _UNREAD)
    if empty is _UNREAD:
        try:
            empty = _EMPTY[cls] = cls.from_payload({}, kind)
        except ControlPayloadError:
            _EMPTY[cls] = None
            raise
    return empty if isinstance(empty, ControlPayload) else cls.from_payload({}, kind)


def decode(msg: ControlMessage) -> Control[ControlPayload]:
    """``msg`` with its payload decoded. Raises ControlPayloadError naming the field."""
    return Control(msg, decode_payload(msg.kind, msg.payload))


def message(payload: ControlPayload, *, id: str | None = None) -> ControlMessage:
    """The spec's ControlMessage for a typed payload (for clients and tests)."""
    kind = payload.KIND
    if not kind:
        raise ValueError(f"{type(payload).__name__} has no kind of its own; build the ControlMessage directly")
    if id is None:
        return ControlMessage(kind, payload=payload.to_payload())
    return ControlMessage(kind, id=id, payload=payload.to_payload())
