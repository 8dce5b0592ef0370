"""Every event kind in one table: its name, what it means, and the fields a text view shows.

``EVENT_KINDS`` maps each member of the ``goldfive.v1.Event`` payload oneof (``run_started``,
``task_completed``, ...) to an ``EventKind``. Every text view renders from it, so a kind is
described once: ``goldfive.event_format`` (``ctl tail``, ``goldfive demo --headless``) and the
TUI's event log (``tui/format.py``); an exporter (OpenTelemetry spans, say) can take the names,
descriptions and field values from here without importing the TUI. A test keeps the table and
the proto's oneof in step.

A field is a value read off the kind's payload message, shown in order: ``sep`` before it
(unless it comes first), ``fmt`` around it, clipped to ``width`` characters by the view
(0: not clipped). Fields with ``brief=False`` are shown only by a view with room for the
whole event (``ctl tail``, the TUI's wrap mode); an empty value is left out with its ``sep``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from google.protobuf.message import Message

from goldfive.conv import from_pb_control_event
from goldfive.controls.payloads import Custom, decode
from goldfive.errors import GoldfiveError
from goldfive.pb.goldfive.v1 import control_pb2, types_pb2
from goldfive.usage.format import format_tokens, format_usd

__all__ = ["EVENT_KINDS", "EventKind", "Field", "Tone", "kind_info", "render_fields"]


class Tone(StrEnum):
    """How a line reads at a glance; a view maps it to a colour (the TUI to a style class)."""

    RUN = "run"
    PLAN = "plan"
    TASK = "task"
    OK = "ok"
    FAIL = "fail"
    WARN = "warn"
    DIM = "dim"
    APPROVAL = "approval"
    CONTROL = "control"
    ACK_OK = "ack-ok"
    ACK_FAIL = "ack-fail"
    DRIFT_INFO = "drift-info"
    DRIFT_WARNING = "drift-warning"
    DRIFT_CRITICAL = "drift-critical"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    #: The value as text, from the kind's payload message ("" when it has none).
    get: Callable[[Any], str]
    width: int = 0
    fmt: str = "{}"
    sep: str = " "
    brief: bool = True


@dataclass(frozen=True, slots=True)
class EventKind:
    name: str
    description: str
    fields: tuple[Field, ...]
    #: The tone of a line of this kind, from its payload.
    tone: Callable[[Any], Tone]
    #: A shorter name for a log's label column (default: the name).
    label: str = ""
    #: The fields a brief line shows (``brief=True``), worked out once.
    brief_fields: tuple[Field, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "brief_fields", tuple(f for f in self.fields if f.brief))
        if not self.label:
            object.__setattr__(self, "label", self.name)

    def label_text(self) -> str:
        return self.label

    def values(self, payload: Message) -> dict[str, str]:
        """Every field's value by name (for an exporter: span attributes, JSON)."""
        return {f.name: f.get(payload) for f in self.fields}


Clip = Callable[[str, int], str]


def _collapse(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if width <= 0 or len(text) <= width else text[: width - 1] + "…"


def render_fields(kind: EventKind, payload: Message, *, clip: Clip = _collapse, brief: bool = True) -> str:
    """The fields of ``payload`` (a message of ``kind``) as one line of text; ``clip`` is the
    view's (text, width) -> text, width 0 meaning no limit."""
    out = ""
    for f in kind.brief_fields if brief else kind.fields:
        value = f.get(payload)
        if not value:
            continue
        text = clip(value, f.width)
        if f.fmt != "{}":
            text = f.fmt.format(text)
        out = out + f.sep + text if out else text
    return out


def kind_info(name: str) -> EventKind | None:
    return EVENT_KINDS.get(name)


# -- reading values ---------------------------------------------------------------------------


def _attr(name: str) -> Callable[[Any], str]:
    """A string field of the payload, as it is."""
    get: Callable[[Any], str] = attrgetter(name)
    return get


def _number(name: str) -> Callable[[Any], str]:
    """A number field of the payload as text ("" when 0: not set)."""

    def get(p: Any) -> str:
        value = getattr(p, name)
        return str(value) if value else ""

    return get


def _enum_name(enum: Any, prefix: str, default: str = "") -> Callable[[int], str]:
    def name(value: int) -> str:
        if not value:
            return default
        try:
            return str(enum.Name(value)).removeprefix(prefix)
        except ValueError:
            return str(value)  # a value this version's enum does not know

    return name


_status = _enum_name(types_pb2.TaskStatus, "TASK_STATUS_", "UNSPECIFIED")
_drift_kind = _enum_name(types_pb2.DriftKind, "DRIFT_KIND_", "UNSPECIFIED")
_severity = _enum_name(types_pb2.DriftSeverity, "DRIFT_SEVERITY_", "INFO")
_ack_result = _enum_name(control_pb2.ControlAckResult, "CONTROL_ACK_RESULT_", "?")
_applied_as = _enum_name(control_pb2.ControlAppliedAs, "CONTROL_APPLIED_AS_")


def _const(tone: Tone) -> Callable[[Any], Tone]:
    return lambda p: tone


_DRIFT_TONES = {"WARNING": Tone.DRIFT_WARNING, "CRITICAL": Tone.DRIFT_CRITICAL}


def _drift_tone(p: Any) -> Tone:
    return _DRIFT_TONES.get(_severity(p.severity), Tone.DRIFT_INFO)


def _plan_added(p: Any) -> str:
    added = set(p.diff.added_task_ids)
    return "; ".join(t.title or t.id for t in p.plan.tasks if t.id in added)


def _control_summary(p: Any) -> str:
    try:
        payload = decode(from_pb_control_event(p.control)).payload
    except GoldfiveError:
        return ""
    return "" if isinstance(payload, Custom) else payload.summary


def _tool_call(p: Any) -> str:
    if p.step == "tool_call":
        return f"{p.tool_name}({p.args_json})"
    if p.step in ("hook", "usage"):  # a Claude Code hook (its name in tool_name), a usage report
        return str(p.tool_name or p.step)
    return "model"


def _seconds(ms: int) -> str:
    """A wait in seconds: one decimal under 10 s (a 50 ms wait is "0.1s", not "0s")."""
    return f"{ms / 1000:.1f}s" if ms < 10_000 else f"{ms / 1000:.0f}s"


def _evidence(p: Any) -> str:
    """A watchdog's evidence, in short: how many pieces over how long."""
    if not p.evidence:
        return ""
    first, last = p.evidence[0].at.ToMilliseconds(), p.evidence[-1].at.ToMilliseconds()
    return f"({len(p.evidence)} pieces of evidence over {(last - first) / 1000:.1f}s)"


_TASK = Field("task_id", _attr("task_id"))

_KINDS = (
    # the run
    EventKind("run_started", "The run began, with the person's input.", (Field("goal_summary", _attr("goal_summary"), 80),), _const(Tone.RUN)),
    EventKind("goal_derived", "The goals the run derived from the input.", (Field("goals", lambda p: ", ".join(g.summary for g in p.goals)),), _const(Tone.RUN)),
    EventKind(
        "plan_submitted", "The first plan: its tasks and their order.",
        (
            Field("revision", lambda p: f"rev {p.plan.revision_index}"),
            Field("tasks", lambda p: f"{len(p.plan.tasks)} tasks", sep="  "),
            Field("task_ids", lambda p: ", ".join(t.id for t in p.plan.tasks), 160, sep=": ", brief=False),
        ),
        _const(Tone.PLAN),
    ),  # fmt: skip
    EventKind(
        "plan_revised", "A new revision of the plan (a steer, a drift), with what it added, removed and changed.",
        (
            Field("revision", lambda p: f"rev {p.plan.revision_index}"),
            Field("diff", lambda p: f"+{len(p.diff.added_task_ids)} -{len(p.diff.removed_task_ids)} ~{len(p.diff.modified_task_ids)}", sep="  "),
            Field("revision_kind", lambda p: _drift_kind(p.plan.revision_kind) if p.plan.revision_kind else "", brief=False),
            Field("added", _plan_added, 160, sep=" new: ", brief=False),
        ),
        _const(Tone.PLAN),
    ),  # fmt: skip
    EventKind("run_completed", "The run ended: every task is done.", (Field("outcome_summary", _attr("outcome_summary"), 80),), _const(Tone.OK)),
    EventKind("run_aborted", "The run ended without finishing, and why.", (Field("reason", _attr("reason"), 80),), _const(Tone.FAIL)),
    EventKind(
        "run_resumed", "The run went on from its recording after its process stopped.",
        (Field("resume_count", _number("resume_count"), fmt="#{}"), Field("detail", _attr("detail"), 100, sep=": ")),
        _const(Tone.OK),
    ),  # fmt: skip
    EventKind(
        "recording_failed", "A durable commit of the recording failed: the run is paused until a RESUME finds it works.",
        (Field("detail", _attr("detail"), 100, fmt="paused: {}"), Field("failed_at_sequence", _number("failed_at_sequence"), fmt="at #{}", brief=False)),
        _const(Tone.FAIL),
    ),  # fmt: skip
    # budgets
    EventKind(
        "budget_warning", "A limit of the run's budget is 80% used.",
        (Field("detail", _attr("detail"), 80, fmt="{} used"),), _const(Tone.WARN),
    ),  # fmt: skip
    EventKind(
        "budget_reached", "A limit of the run's budget is reached: the run is paused, no new model or tool call starts.",
        (Field("detail", _attr("detail"), 80, fmt="paused: {}"), Field("where", _attr("where"), sep=" at ", brief=False), Field("task_id", _attr("task_id"), sep=" in ", brief=False)),
        _const(Tone.FAIL),
    ),  # fmt: skip
    EventKind(
        "budget_changed", "The run's budget was set (when it started, by a BUDGET control, on resume).",
        (Field("detail", _attr("detail"), 80), Field("author", _attr("author"), sep=" by ", brief=False)),
        _const(Tone.PLAN),
    ),  # fmt: skip
    # tasks
    EventKind("task_started", "A task began (an agent invocation).", (_TASK, Field("assignee_agent_id", _attr("assignee_agent_id"), sep=" on ", brief=False)), _const(Tone.TASK)),
    EventKind(
        "task_progress", "An agent reported progress on its task.",
        (_TASK, Field("fraction", lambda p: f"{round(p.fraction * 100)}%" if p.fraction >= 0 else "", brief=False), Field("detail", _attr("detail"), 70)),
        _const(Tone.DIM),
    ),  # fmt: skip
    EventKind("task_completed", "A task finished, with its result.", (_TASK, Field("result_summary", _attr("result_summary"), 60, fmt='"{}"')), _const(Tone.OK)),
    EventKind("task_failed", "A task failed, and why.", (_TASK, Field("reason", _attr("reason"), 70)), _const(Tone.FAIL)),
    EventKind("task_cancelled", "A task was cancelled (a CANCEL, a STEER, the run ending).", (_TASK, Field("reason", _attr("reason"), 70)), _const(Tone.WARN)),
    EventKind("task_blocked", "A task waits on something (an approval, a person).", (_TASK, Field("blocker", _attr("blocker"), 70)), _const(Tone.WARN)),
    EventKind(
        "task_transitioned", "A task changed status another way (unblocked, rewound, taken back).",
        (
            _TASK,
            Field("from_status", lambda p: _status(p.from_status)),
            Field("to_status", lambda p: _status(p.to_status), sep=" -> "),
            Field("reason", _attr("reason"), 70),
        ),
        _const(Tone.TASK),
    ),  # fmt: skip
    EventKind(
        "invocation_abandoned", "An agent ignored cancellation past its grace period and was left behind.",
        (_TASK, Field("grace_s", lambda p: f"after {p.grace_s:g}s"), Field("reason", _attr("reason"), 70, sep=": ")),
        _const(Tone.FAIL),
    ),  # fmt: skip
    EventKind(
        "agent_step", "One step of an agent's turn: a model answer or a tool call and its outcome.",
        (_TASK, Field("call", _tool_call, 60), Field("outcome", _attr("outcome")), Field("text", _attr("text"), 60, sep=": ")),
        lambda p: Tone.FAIL if p.step == "tool_call" and p.outcome in ("error", "rejected") else Tone.DIM,
    ),  # fmt: skip
    # drift
    EventKind(
        "drift_detected", "Something went off the plan (or a person steered); severity says how far.",
        (
            Field("kind", lambda p: _drift_kind(p.kind)),
            Field("severity", lambda p: _severity(p.severity)),
            Field("current_task_id", _attr("current_task_id"), fmt="[{}]", brief=False),
            Field("detail", _attr("detail"), 80, sep=": "),
            Field("evidence", _evidence, brief=False),
        ),
        _drift_tone,
        label="drift",
    ),  # fmt: skip
    # approvals
    EventKind(
        "approval_requested", "A task or a tool call waits for a person's yes or no.",
        (
            Field("target_id", _attr("target_id")),
            Field("kind", _attr("kind"), fmt="({})"),
            Field("tool_name", _attr("tool_name"), brief=False),
            Field("task_id", _attr("task_id"), fmt="[{}]", brief=False),
            Field("prompt", _attr("prompt"), 60),
            Field("args_json", _attr("args_json"), 80, brief=False),
        ),
        _const(Tone.APPROVAL),
    ),  # fmt: skip
    EventKind("approval_granted", "An approval was granted.", (Field("target_id", _attr("target_id")), Field("detail", _attr("detail"), 80)), _const(Tone.OK)),
    EventKind("approval_rejected", "An approval was rejected (or timed out).", (Field("target_id", _attr("target_id")), Field("detail", _attr("detail"), 80)), _const(Tone.FAIL)),
    EventKind(
        "approval_decided", "Who decided an approval, how, and what ran (the approvals ledger).",
        (
            Field("outcome", _attr("outcome")),
            Field("what", lambda p: p.tool_name or p.target_id),
            Field("author", _attr("author"), sep=" by "),
            Field("client", _attr("client"), sep=" via "),
            Field("reason", _attr("reason"), 60, sep=": "),
            Field("ran_args_json", _attr("ran_args_json"), 120, fmt="ran {}", brief=False),
        ),
        lambda p: Tone.OK if p.outcome.startswith("APPROVED") or p.outcome in ("EDITED_APPROVED", "ANSWERED") else Tone.FAIL,
    ),  # fmt: skip
    EventKind(
        "approval_expiring", "An approval's deadline is near; what happens then.",
        (
            Field("target_id", _attr("target_id")),
            Field("on_timeout", _attr("on_timeout"), sep=": "),
            Field("ms_left", lambda p: f"in {p.ms_left / 1000:.0f}s unless decided"),
        ),
        _const(Tone.WARN),
    ),  # fmt: skip
    EventKind(
        "approval_reminded", "An approval still undecided: announced again (a reminder) before its timeout policy acts.",
        (
            Field("target_id", _attr("target_id")),
            Field("waited_ms", lambda p: f"still undecided after {_seconds(p.waited_ms)}", sep=": "),
            Field("reminder", _number("reminder"), fmt="(reminder {})"),
        ),
        _const(Tone.WARN),
    ),  # fmt: skip
    EventKind(
        "approval_escalated", "An approval still undecided: handed to a second person before its timeout policy acts.",
        (
            Field("target_id", _attr("target_id")),
            Field("waited_ms", lambda p: f"escalated after {_seconds(p.waited_ms)}", sep=": "),
            Field("why", _attr("why"), fmt="({})"),
        ),
        _const(Tone.WARN),
    ),  # fmt: skip
    EventKind(
        "approval_reviewed", "The run's reviewer on a pending tool approval: approve or reject (after a grace a person may overrule), or ask a person.",
        (
            Field("target_id", _attr("target_id")),
            Field("decision", lambda p: f"reviewer: {p.decision}", sep=": "),
            Field("grace_ms", lambda p: f"in {_seconds(p.grace_ms)} unless a person decides" if p.decision != "ask" else ""),
            Field("reason", _attr("reason"), sep=": "),
            Field("error", _attr("error"), fmt="({})"),
        ),
        lambda p: Tone.WARN if p.decision == "ask" else Tone.DIM,
    ),  # fmt: skip
    # questions
    EventKind(
        "question_asked", "An agent asks a person a question (answered with ANSWER: text, or one of the options).",
        (
            Field("target_id", _attr("target_id")),
            Field("task_id", _attr("task_id"), fmt="[{}]", brief=False),
            Field("prompt", _attr("prompt"), 60, sep=": "),
            Field("options", lambda p: " / ".join(p.options), 60, fmt="({})"),
            Field("free_text", lambda p: "" if p.free_text or not p.options else "pick one", brief=False),
        ),
        _const(Tone.APPROVAL),
    ),  # fmt: skip
    EventKind(
        "question_answered", "A question was answered (or timed out, or was withdrawn).",
        (
            Field("target_id", _attr("target_id")),
            Field("outcome", _attr("outcome")),
            Field("text", _attr("text"), 60, fmt='"{}"', sep=": "),
            Field("author", _attr("author"), sep=" by "),
            Field("client", _attr("client"), sep=" via "),
        ),
        lambda p: Tone.OK if p.outcome in ("answered", "yes") else Tone.FAIL if p.outcome == "no" else Tone.WARN,
    ),  # fmt: skip
    # controls
    EventKind(
        "control_received", "A control reached the run (the audit trail: kind, id, author).",
        (
            Field("kind", _attr("kind")),
            Field("id", lambda p: p.control.id, brief=False),
            Field("author", _attr("author"), sep=" by "),
            Field("summary", _control_summary, 60, fmt='"{}"', brief=False),
        ),
        _const(Tone.CONTROL),
    ),  # fmt: skip
    EventKind(
        "control_acked", "The run's answer to a control: its result, what it was applied as, and why.",
        (
            Field("kind", _attr("kind")),
            Field("control_id", lambda p: p.ack.control_id, brief=False),
            Field("result", lambda p: _ack_result(p.ack.result)),
            Field("applied_as", lambda p: _applied_as(p.ack.applied_as), fmt="as {}", brief=False),
            Field("detail", lambda p: p.ack.detail),
        ),
        lambda p: Tone.ACK_OK if p.ack.result == control_pb2.CONTROL_ACK_RESULT_SUCCESS else Tone.ACK_FAIL,
    ),  # fmt: skip
    # steering that waits or sticks
    EventKind(
        "steer_queued", "A STEER sent \"after this task\" waits in the run's queue; it is delivered when the next task starts.",
        (
            Field("id", lambda p: p.note.id),
            Field("author", lambda p: p.note.author, sep=" by "),
            Field("text", lambda p: p.note.text, 80, sep=": "),
        ),
        _const(Tone.CONTROL),
    ),  # fmt: skip
    EventKind(
        "steer_queue_changed", "A queued steer was edited, withdrawn, moved, held, released, delivered or made standing.",
        (
            Field("note_id", _attr("note_id")),
            Field("op", _attr("op")),
            Field("text", _attr("text"), 60, sep=": "),
            Field("order", lambda p: ", ".join(p.order) or "(empty)", fmt="queue: {}", sep="  ", brief=False),
        ),
        _const(Tone.CONTROL),
    ),  # fmt: skip
    EventKind(
        "guidance_added", "A standing note: every later task's input carries it until it is removed.",
        (
            Field("id", lambda p: p.note.id),
            Field("made_from", _attr("made_from"), fmt="(from {})", brief=False),
            Field("author", lambda p: p.note.author, sep=" by "),
            Field("text", lambda p: p.note.text, 80, sep=": "),
        ),
        _const(Tone.CONTROL),
    ),  # fmt: skip
    EventKind(
        "guidance_removed", "A standing note was removed: later tasks no longer get it.",
        (Field("guidance_id", _attr("guidance_id")), Field("author", _attr("author"), sep=" by ")),
        _const(Tone.CONTROL),
    ),  # fmt: skip
    # messages and conversations
    EventKind(
        "message_parked", "An injected message waits for the running turn's next input (or the next turn).",
        (Field("lane", _attr("lane")), Field("role", _attr("role")), Field("text", _attr("text"), 60, sep=": ")),
        _const(Tone.DIM),
    ),  # fmt: skip
    EventKind(
        "message_delivered", "An injected message reached the agent.",
        (Field("message_id", _attr("message_id"), brief=False), Field("lane", _attr("lane")), Field("via", _attr("via"), sep=" via ")),
        _const(Tone.DIM),
    ),  # fmt: skip
    EventKind(
        "message_returned", "An injected message was handed back when its turn closed; it goes to the next turn.",
        (Field("lane", _attr("lane")), Field("message_id", _attr("message_id"))),
        _const(Tone.DIM),
    ),  # fmt: skip
    EventKind("conversation_started", "A conversation lane opened.", (Field("lane", _attr("lane")), Field("input", _attr("input"), 60, brief=False)), _const(Tone.DIM)),
    # usage
    EventKind(
        "usage_recorded", "One model call's tokens, and its cost when the price is known.",
        (
            Field("where", lambda p: p.task_id or p.purpose or "run"),
            Field("model", lambda p: p.model or "?", 40),
            Field("input", lambda p: f"in {format_tokens(p.input_tokens)}" + (f" (cached {format_tokens(p.cached_tokens)})" if p.cached_tokens else "")),
            Field("output", lambda p: f"out {format_tokens(p.output_tokens)}"),
            Field("cost", lambda p: format_usd(p.cost_usd) if p.HasField("cost_usd") else "cost ?"),
            Field("source", lambda p: p.source or "?", 40, fmt="[{}]", brief=False),
        ),
        _const(Tone.DIM),
    ),  # fmt: skip
    EventKind("conversation_ended", "A conversation lane closed.", (Field("lane", _attr("lane")), Field("reason", _attr("reason"), 80)), _const(Tone.DIM)),
)

EVENT_KINDS: Mapping[str, EventKind] = MappingProxyType({k.name: k for k in _KINDS})
