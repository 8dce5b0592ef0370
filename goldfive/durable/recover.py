"""What a run needs to continue, folded from its recording.

``recover(events)`` reads a run's events in sequence order and returns a ``Recovered``: the
goals, the plan at its latest revision with every status, each completed task's result, the
approvals that were waiting, the run-scope approval rules made during the run, the pause, the injected messages not yet delivered, the controls
that were acked but whose effect the crash cut off, the steerer's counters and the last
sequence. It is a pure fold: nothing is written, nothing is guessed.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from goldfive import conv
from goldfive.approvals.recorded import RecordedRules
from goldfive.approvals.rules import Rule
from goldfive.budget.model import Budget
from goldfive.controls.payloads import Cancel, Control, ControlPayload, Guidance, Inject, Rewind, Steer, SteerQueue, decode
from goldfive.errors import ControlPayloadError, ConversionError
from goldfive.events import budget_from_pb
from goldfive.inbox import InjectedMessage
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.control import AppliedAs
from goldfive.run.acks import Follows, PauseChange, applied_as_of, meaning_of
from goldfive.steerer import NOT_STARTED
from goldfive.steering import NOTE_EVENT_KINDS, QueueOp, SteeringNote, SteeringNotes
from goldfive.types import DriftKind, Goal, Plan, TaskStatus, set_task_status

_STATUS_EVENTS = {
    "task_started": TaskStatus.RUNNING,
    "task_completed": TaskStatus.COMPLETED,
    "task_failed": TaskStatus.FAILED,
    "task_cancelled": TaskStatus.CANCELLED,
    "task_blocked": TaskStatus.BLOCKED,
}
_USER_DRIFTS = {DriftKind.USER_STEER, DriftKind.USER_CANCEL, DriftKind.USER_PAUSE}


@dataclass
class Recovered:
    run_id: str
    session_id: str = ""
    user_input: str = ""
    goal_summary: str = ""
    #: How the run was launched (RunStarted.launch_json), for ``goldfive resume``.
    launch: dict[str, Any] = field(default_factory=dict)
    goals: list[Goal] = field(default_factory=list)
    #: The plan as first submitted (to check a resumed run's planner against) and as it is.
    first_plan: Plan | None = None
    plan: Plan | None = None
    results: dict[str, str] = field(default_factory=dict)
    #: task id -> how many times it started.
    starts: dict[str, int] = field(default_factory=dict)
    #: approval target id -> its task, for approvals requested and never decided.
    pending_approvals: dict[str, str] = field(default_factory=dict)
    #: Run-scope approval rules made during the run ("approve and don't ask again", the
    #: ``approval_rules`` verb), less those removed, as the run held them at the stop.
    #: Machine-scope rules are saved in the machine's rules file, not here.
    rules: list[Rule] = field(default_factory=list)
    paused: bool = False
    #: Injected messages parked and never delivered, in the order they were parked.
    undelivered: list[InjectedMessage] = field(default_factory=list)
    #: Acked SUCCESS but their effect not in the recording: applied again on resume.
    steers_to_apply: list[Control[Steer]] = field(default_factory=list)
    rewinds_to_apply: list[str] = field(default_factory=list)
    messages_to_inject: list[InjectedMessage] = field(default_factory=list)
    #: A CANCEL acked before the run could end: the resumed run ends cancelled at once.
    cancel_reason: str = ""
    processed_steer_ids: list[str] = field(default_factory=list)
    #: The steer queue and the standing guidance (goldfive.steering), as the events left them;
    #: a queued note whose delivery the stop cut off (no USER_STEER drift after it) is back at
    #: the queue's front.
    notes: SteeringNotes = field(default_factory=SteeringNotes)
    #: STEERs acked QUEUED_LATER / STANDING whose steer_queued / guidance_added is not in the
    #: recording: queued or made standing again on resume.
    notes_to_add: list[Control[Steer]] = field(default_factory=list)
    #: STEER_QUEUE / GUIDANCE changes acked SUCCESS whose event (steer_queue_changed,
    #: guidance_removed, guidance_added) is not in the recording: applied again on resume.
    note_changes_to_apply: list[Control[SteerQueue] | Control[Guidance]] = field(default_factory=list)
    #: Of those, a GUIDANCE make_standing of a queued note cut off between its two events (the
    #: note left the queue, no guidance_added): control id -> the note, made standing on resume.
    half_made_standing: dict[str, SteeringNote] = field(default_factory=dict)
    auto_refines: int = 0
    resume_count: int = 0
    #: "run_completed" / "run_aborted" when the run already ended, with its reason.
    ended: str = ""
    end_reason: str = ""
    last_sequence: int = -1
    #: Rows of the recording that could not be read: ignored and counted, never guessed.
    unreadable: int = 0
    #: The run's budget as last recorded (budget_changed), None when it had none.
    budget: Budget | None = None
    #: Tool calls made so far, and the seconds the run ran (its stops left out): what a
    #: budget's tool_calls and seconds count from.
    tool_calls: int = 0
    ran_s: float = 0.0
    #: The recorded events themselves, for watchers that join at the resume (a TUI).
    history: list[pb.Event] = field(default_factory=list, repr=False)

    @property
    def interrupted(self) -> list[str]:
        """Tasks the stop cut off (running or blocked at the last event): they run again."""
        if self.plan is None:
            return []
        return [t.id for t in self.plan.tasks if t.status in (TaskStatus.RUNNING, TaskStatus.BLOCKED)]


#: What a STEER_QUEUE or GUIDANCE ack says changed the notes (UNCHANGED and the listings did not).
_QUEUE_CHANGES = frozenset({AppliedAs.QUEUE_CHANGED, AppliedAs.WITHDRAWN})
_GUIDANCE_CHANGES = frozenset({AppliedAs.GUIDANCE_REMOVED, AppliedAs.MADE_STANDING})


class _Fold:
    def __init__(self, run_id: str) -> None:
        self.r = Recovered(run_id)
        self.rules = RecordedRules()
        self.controls: dict[str, Control[ControlPayload]] = {}
        self.parked: dict[str, InjectedMessage] = {}
        #: Acked STEERs / REWIND_TOs waiting for the event that shows they were applied.
        self.steers: deque[Control[Steer]] = deque()
        self.rewinds: deque[str] = deque()
        #: Acked controls whose message (an INJECT_MESSAGE, a STEER noted) was not yet parked.
        self.injects: dict[str, InjectedMessage] = {}
        #: Queued notes delivered (steer_queue_changed "delivered") whose USER_STEER drift has not come.
        self.delivering: deque[SteeringNote] = deque()
        #: STEERs acked QUEUED_LATER / STANDING, by control id, until their event comes.
        self.notes_acked: dict[str, Control[Steer]] = {}
        #: STEER_QUEUE / GUIDANCE changes acked, by control id, until their event comes.
        self.changes_acked: dict[str, Control[SteerQueue] | Control[Guidance]] = {}
        self.half_made: dict[str, SteeringNote] = {}
        #: The event clock: where this process's stretch of the run began, and its last event.
        self._since_ms = -1
        self._last_ms = 0

    def apply(self, ev: pb.Event) -> None:
        r = self.r
        kind = ev.WhichOneof("payload") or ""
        ms = ev.emitted_at.seconds * 1000 + ev.emitted_at.nanos // 1_000_000
        if self._since_ms < 0:
            self._since_ms = ms
        elif kind == "run_resumed":  # the time the run was stopped is not time it ran
            r.ran_s += max(0, self._last_ms - self._since_ms) / 1000
            self._since_ms = ms
        self._last_ms = ms
        r.last_sequence = ev.sequence
        r.session_id = r.session_id or ev.session_id
        handler = getattr(self, "_" + kind, None)
        self.rules.apply(ev)
        if kind in NOTE_EVENT_KINDS:
            self._note_event(ev, kind)
        if kind in _STATUS_EVENTS:
            self._status(getattr(ev, kind).task_id, _STATUS_EVENTS[kind], ev)
        elif handler is not None:
            handler(getattr(ev, kind))

    # -- the run -------------------------------------------------------------------------
    def _run_started(self, p: pb.RunStarted) -> None:
        self.r.user_input, self.r.goal_summary = p.user_input, p.goal_summary
        if p.launch_json:
            try:
                launch = json.loads(p.launch_json)
            except ValueError:
                launch = {}
            self.r.launch = launch if isinstance(launch, dict) else {}

    def _run_resumed(self, p: pb.RunResumed) -> None:
        self.r.resume_count = p.resume_count

    def _budget_changed(self, p: pb.BudgetChanged) -> None:
        self.r.budget = budget_from_pb(p.budget)

    def _budget_reached(self, p: pb.BudgetReached) -> None:
        self.r.paused = True  # until a RESUME (or BUDGET with resume) acked after it

    def _agent_step(self, p: pb.AgentStep) -> None:
        if p.step == "tool_call":
            self.r.tool_calls += 1

    def _goal_derived(self, p: pb.GoalDerived) -> None:
        self.r.goals = [conv.from_pb_goal(g) for g in p.goals]

    def _plan_submitted(self, p: pb.PlanSubmitted) -> None:
        self.r.plan = conv.from_pb_plan(p.plan)
        self.r.first_plan = self.r.first_plan or conv.from_pb_plan(p.plan)

    def _plan_revised(self, p: pb.PlanRevised) -> None:
        self.r.plan = conv.from_pb_plan(p.plan)
        if p.plan.revision_kind and conv.drift_kind_from_pb(p.plan.revision_kind) not in _USER_DRIFTS:
            self.r.auto_refines += 1

    def _run_completed(self, p: pb.RunCompleted) -> None:
        self.r.ended, self.r.end_reason = "run_completed", p.outcome_summary

    def _run_aborted(self, p: pb.RunAborted) -> None:
        self.r.ended, self.r.end_reason = "run_aborted", p.reason

    # -- tasks ----------------------------------------------------------------------------
    def _status(self, task_id: str, status: TaskStatus, ev: pb.Event) -> None:
        r = self.r
        if status is TaskStatus.RUNNING:
            r.starts[task_id] = r.starts.get(task_id, 0) + 1
        if status is TaskStatus.COMPLETED:
            r.results[task_id] = ev.task_completed.result_summary
        self._set(task_id, status)

    def _task_transitioned(self, p: pb.TaskTransitioned) -> None:
        to = conv.task_status_from_pb(p.to_status)
        if to is TaskStatus.PENDING:
            self.r.results.pop(p.task_id, None)
            if p.reason == NOT_STARTED and self.r.starts.get(p.task_id, 0) > 0:
                self.r.starts[p.task_id] -= 1  # a start taken back before its agent ran
        if p.reason == "rewind" and self.rewinds and self.rewinds[0] == p.task_id:
            self.rewinds.popleft()
        self._set(p.task_id, to)

    def _set(self, task_id: str, status: TaskStatus) -> None:
        plan = self.r.plan
        if plan is not None and plan.has_task(task_id):
            set_task_status(plan.task(task_id), status)

    # -- approvals, controls, messages ------------------------------------------------------
    def _approval_requested(self, p: pb.ApprovalRequested) -> None:
        self.r.pending_approvals[p.target_id] = p.task_id

    def _approval_granted(self, p: pb.ApprovalGranted) -> None:
        self.r.pending_approvals.pop(p.target_id, None)

    def _approval_rejected(self, p: pb.ApprovalRejected) -> None:
        self.r.pending_approvals.pop(p.target_id, None)

    def _control_received(self, p: pb.ControlReceived) -> None:
        try:
            self.controls[p.control.id] = decode(conv.from_pb_control_event(p.control))
        except (ConversionError, ControlPayloadError):
            pass  # its ack was FAILURE: nothing to carry over

    def _control_acked(self, p: pb.ControlAcked) -> None:
        """What the ack says the control was applied as (``ACK_MEANING``), with its payload."""
        ack = conv.from_pb_control_ack(p.ack)
        control = self.controls.pop(ack.control_id, None)
        if control is None:
            return
        meaning = meaning_of(ack, p.kind or control.kind_name)
        payload = control.payload
        if meaning.pause is PauseChange.PAUSES:
            self.r.paused = True
        elif meaning.pause is PauseChange.UNPAUSES:
            self.r.paused = False
        if meaning.ends_run:
            self.r.cancel_reason = payload.why if isinstance(payload, Cancel) else ack.detail
        if meaning.steer_seen and isinstance(payload, Steer):
            self.r.processed_steer_ids.append(payload.dedupe_id(control.id))
        if applied_as_of(ack, p.kind) in (AppliedAs.QUEUED_LATER, AppliedAs.STANDING) and isinstance(payload, Steer):
            self.notes_acked[control.id] = Control(control.message, payload)
        applied = applied_as_of(ack, p.kind)
        if isinstance(payload, SteerQueue) and applied in _QUEUE_CHANGES:
            self.changes_acked[control.id] = Control(control.message, payload)
        elif isinstance(payload, Guidance) and applied in _GUIDANCE_CHANGES:
            self.changes_acked[control.id] = Control(control.message, payload)
        if meaning.follows is Follows.REPLAN and isinstance(payload, Steer):
            self.steers.append(Control(control.message, payload))
        elif meaning.follows is Follows.REWIND and isinstance(payload, Rewind):
            self.rewinds.append(payload.task_id)
        elif meaning.follows is Follows.MESSAGE and isinstance(payload, (Inject, Steer)):
            text, role = (payload.text, payload.role) if isinstance(payload, Inject) else (payload.note, "user")
            self.injects[control.id] = InjectedMessage(text=text, role=role, control_id=control.id)

    def _note_event(self, ev: pb.Event, kind: str) -> None:
        notes = self.r.notes
        if kind == "steer_queue_changed" and ev.steer_queue_changed.op == QueueOp.DELIVERED.value:
            note = notes.queued(ev.steer_queue_changed.note_id)
            if note is not None:
                self.delivering.append(note)
        if kind == "steer_queue_changed" and ev.steer_queue_changed.op == QueueOp.MADE_STANDING.value:
            note = notes.queued(ev.steer_queue_changed.note_id)
            if note is not None and ev.steer_queue_changed.control_id in self.changes_acked:
                self.half_made[ev.steer_queue_changed.control_id] = note  # until its guidance_added
        elif kind == "steer_queue_changed":
            self.changes_acked.pop(ev.steer_queue_changed.control_id, None)
        elif kind == "steer_queued":
            self.notes_acked.pop(ev.steer_queued.note.control_id, None)
        elif kind == "guidance_added":  # a STEER made standing, or a GUIDANCE make_standing's last event
            self.notes_acked.pop(ev.guidance_added.note.control_id, None)
            self.changes_acked.pop(ev.guidance_added.note.control_id, None)
            self.half_made.pop(ev.guidance_added.note.control_id, None)
        elif kind == "guidance_removed":
            self.changes_acked.pop(ev.guidance_removed.control_id, None)
        notes.apply(ev, kind)

    def _drift_detected(self, p: pb.DriftDetected) -> None:
        if conv.drift_kind_from_pb(p.kind) is not DriftKind.USER_STEER:
            return
        if self.delivering:
            self.delivering.popleft()  # the queued note delivered just before it was applied
        elif self.steers:
            self.steers.popleft()  # the acked STEER it stands for was applied

    def _message_parked(self, p: pb.MessageParked) -> None:
        self.parked[p.message_id] = InjectedMessage(text=p.text, role=p.role or "user", id=p.message_id, control_id=p.control_id)
        self.injects.pop(p.control_id, None)

    def _message_delivered(self, p: pb.MessageDelivered) -> None:
        self.parked.pop(p.message_id, None)

    def finish(self) -> Recovered:
        r = self.r
        if self._since_ms >= 0:
            r.ran_s += max(0, self._last_ms - self._since_ms) / 1000
        r.undelivered = list(self.parked.values())
        r.steers_to_apply = list(self.steers)
        r.rewinds_to_apply = [t for t in self.rewinds if t]
        r.messages_to_inject = list(self.injects.values())
        r.notes_to_add = list(self.notes_acked.values())
        r.note_changes_to_apply = list(self.changes_acked.values())
        r.half_made_standing = dict(self.half_made)
        r.rules = [rule for rule in self.rules.rules() if rule.scope == "run"]
        if self.delivering:  # cut off between its delivery and its steer: delivered again
            r.notes.queue[:0] = list(self.delivering)
        if r.plan is not None:
            for task in r.plan.tasks:
                task.attempt = r.starts.get(task.id, 0)
        return r


def recover(run_id: str, events: Iterable[pb.Event], *, unreadable: int = 0) -> Recovered:
    """Fold ``events`` (one run's, in sequence order, gap-free) into what it needs to go on."""
    fold = _Fold(run_id)
    history = list(events)
    for ev in history:
        fold.apply(ev)
    out = fold.finish()
    out.unreadable = unreadable
    out.history = history
    return out
