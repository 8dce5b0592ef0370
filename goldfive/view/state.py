"""RunState: the one reducer that folds a run's event stream into a run-state model.

Live views (the TUI), replay and run snapshots all use it, so it knows nothing about any UI.
``apply`` does bounded work per event: plan events are O(plan), everything else O(1).
Controls a client sends itself can be recorded with ``control_sent`` / ``control_ack`` before
(or without) their ``control_received`` / ``control_acked`` events; both paths merge by id.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

from goldfive import conv
from goldfive.budget.model import LIMITS, used_line
from goldfive.control import ControlAck, ControlMessage, kind_name
from goldfive.controls.payloads import decode_payload
from goldfive.errors import ConversionError, GoldfiveError
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.run.acks import ACK_MEANING, Follows, PauseChange, applied_as_of
from goldfive.steering import SteeringNotes
from goldfive.types import DriftKind, TaskStatus
from goldfive.usage.ledger import recorded_from_pb
from goldfive.usage.model import UsageTotals
from goldfive.view.models import (
    ApprovalView,
    BudgetPauseView,
    ControlView,
    DriftView,
    RunPhase,
    TaskView,
    parse_args,
    summarize_payload,
)

__all__ = ["RunState"]

_BUSY = frozenset({TaskStatus.RUNNING, TaskStatus.BLOCKED})
_RECENT_DRIFTS = 50
_RATE_WINDOW_S = 5
#: The burn rate is the cost of the last few minutes of the event clock, per hour.
_BURN_WINDOW_MS = 5 * 60_000
_MIN_BURN_SPAN_MS = 1000


@dataclass
class RunState:
    run_id: str = ""
    goal_summary: str = ""
    goals: list[str] = field(default_factory=list)
    started_ms: int = 0
    ended_ms: int = 0
    last_event_ms: int = 0
    finished: str = ""  # "", "COMPLETED" or "ABORTED"
    paused: bool = False
    #: What paused the run and when: the control's kind ("PAUSE", "GOLDFIVE_PAUSE_ESCALATE"),
    #: or "RECORDING" when a durable commit of its recording failed.
    pause_kind: str = ""
    paused_ms: int = 0
    abort_reason: str = ""
    outcome: str = ""
    revision: int = 0
    plan_summary: str = ""
    tasks: dict[str, TaskView] = field(default_factory=dict)
    task_order: list[str] = field(default_factory=list)
    approvals: dict[str, ApprovalView] = field(default_factory=dict)
    #: How many times the run was resumed after its process stopped (RunResumed).
    resumes: int = 0
    #: Why its recording failed (RecordingFailed), until a RESUME finds writing works again.
    recording_error: str = ""
    controls: dict[str, ControlView] = field(default_factory=dict)
    drifts: deque[DriftView] = field(default_factory=lambda: deque(maxlen=_RECENT_DRIFTS))
    events: int = 0
    last_sequence: int = -1
    missed: int = 0
    #: Events whose payload could not be folded (see ``apply``).
    malformed: int = 0
    kind_counts: dict[str, int] = field(default_factory=dict)
    #: The run's model calls so far (usage_recorded), also across resumes.
    usage: UsageTotals = field(default_factory=UsageTotals)
    #: The steer queue ("after this task") and the standing guidance (goldfive.steering).
    notes: SteeringNotes = field(default_factory=SteeringNotes)
    #: The run's budget (budget_changed): limit name -> allowed; empty: no limits.
    budget: dict[str, float] = field(default_factory=dict)
    #: Tool calls so far (agent_step tool_call), what a tool_calls limit counts.
    tool_calls: int = 0
    #: "budget reached, tokens 50,210 of 50,000" while the budget holds the run paused.
    budget_reached: str = ""
    #: The same pause, its figures (the phone page's budget item); None while not held.
    budget_pause: BudgetPauseView | None = None
    #: The last 80% warning ("tokens 40,100 of 50,000 (80%)"), "" when none.
    budget_warning: str = ""
    _burn: deque[tuple[int, float]] = field(default_factory=deque, repr=False)
    _drift_control: dict[str, str] = field(default_factory=dict, repr=False)
    _rate: deque[list[int]] = field(default_factory=deque, repr=False)

    # -- construction --------------------------------------------------------------------
    @classmethod
    def from_events(cls, events: Iterable[pb.Event]) -> RunState:
        state = cls()
        for ev in events:
            state.apply(ev)
        return state

    # -- derived -------------------------------------------------------------------------
    @property
    def phase(self) -> RunPhase:
        if self.finished:
            return RunPhase(self.finished)
        if not self.started_ms and not self.events:
            return RunPhase.PENDING
        if not self.paused:
            return RunPhase.RUNNING
        busy = any(t.status in _BUSY for t in self.tasks.values())
        return RunPhase.PAUSING if busy else RunPhase.PAUSED

    def budget_line(self) -> str:
        """What is used of each limit of the run's budget ("" without one)."""
        if not self.budget:
            return ""
        u = self.usage
        used = {"tokens": float(u.tokens), "usd": u.cost_usd, "model_calls": float(u.calls), "tool_calls": float(self.tool_calls)}
        return used_line(self.budget, used)

    def waiting_for_a_person(self) -> list[ApprovalView]:
        """The pending approvals and questions a person must decide: not those the run's
        reviewer has (reviewing, or its verdict in its grace), which a person may still overrule."""
        return [a for a in self.approvals.values() if not a.with_reviewer]

    def with_reviewer(self) -> list[ApprovalView]:
        """The pending approvals the run's reviewer has (see :meth:`waiting_for_a_person`)."""
        return [a for a in self.approvals.values() if a.with_reviewer]

    def ordered_tasks(self) -> list[TaskView]:
        return [self.tasks[tid] for tid in self.task_order]

    def count_status(self, *statuses: TaskStatus) -> int:
        return sum(1 for t in self.tasks.values() if t.status in statuses)

    def elapsed_ms(self, now_ms: int | None = None) -> int:
        if not self.started_ms:
            return 0
        end = self.ended_ms or (now_ms if now_ms is not None else self.last_event_ms)
        return max(0, end - self.started_ms)

    def events_per_second(self, now_ms: int | None = None) -> float:
        """Events per second over the last few seconds of the event clock."""
        now_s = (now_ms if now_ms is not None else self.last_event_ms) // 1000
        total = sum(n for sec, n in self._rate if now_s - _RATE_WINDOW_S < sec <= now_s)
        return total / _RATE_WINDOW_S

    def burn_rate(self, now_ms: int | None = None) -> float | None:
        """USD per hour over the last few minutes of the run (priced calls only); None before
        there is a second of history or a priced call to go on."""
        if not self._burn or not self.started_ms:
            return None
        now = self.ended_ms or (now_ms if now_ms is not None else self.last_event_ms)
        since = max(self.started_ms, now - _BURN_WINDOW_MS)
        span = now - since
        if span < _MIN_BURN_SPAN_MS:
            return None
        spent = sum(cost for at, cost in self._burn if since <= at <= now)
        return spent * 3_600_000 / span

    # -- local controls ------------------------------------------------------------------
    def control_sent(self, msg: ControlMessage, now_ms: int = 0) -> ControlView:
        kind = kind_name(msg.kind)
        view = self.controls.get(msg.id)
        if view is None:
            view = ControlView(id=msg.id, kind=kind, summary=summarize_payload(kind, msg.payload))
            self.controls[msg.id] = view
        view.sent_ms = view.sent_ms or msg.issued_at_ms or now_ms
        if not view.author:
            try:
                view.author = decode_payload(msg.kind, msg.payload).author
            except GoldfiveError:
                pass  # a malformed payload: its FAILURE ack says why
        return view

    def control_ack(self, ack: ControlAck, kind: str = "") -> ControlView:
        view = self.controls.get(ack.control_id)
        if view is None:
            view = ControlView(id=ack.control_id, kind=kind.upper(), summary="")
            self.controls[ack.control_id] = view
        view.ack_result = str(getattr(ack.result, "value", ack.result))
        view.ack_detail = ack.detail
        view.acked_ms = ack.acked_at_ms
        applied = applied_as_of(ack, view.kind)
        view.applied_as = applied
        pause = ACK_MEANING[applied].pause if applied is not None else PauseChange.NONE
        if pause is PauseChange.PAUSES:
            # An escalation names the pause even over one already in place: it needs a person.
            if not self.paused or view.kind == "GOLDFIVE_PAUSE_ESCALATE":
                self.pause_kind, self.paused_ms = view.kind, ack.acked_at_ms or self.last_event_ms
            self.paused = True
        elif pause is PauseChange.UNPAUSES:
            self.paused = False
            self.pause_kind, self.paused_ms = "", 0
            self.budget_reached = ""
            self.budget_pause = None
            self.recording_error = ""  # a RESUME is acked SUCCESS only once a commit works again
        return view

    def apply_missed(self, count: int) -> None:
        """Record that ``count`` events were lost by the subscriber (never applied)."""
        self.missed += count

    # -- the reducer ---------------------------------------------------------------------
    def apply(self, ev: pb.Event) -> None:
        kind = ev.WhichOneof("payload") or ""
        ts = ev.emitted_at
        ms = ts.seconds * 1000 + ts.nanos // 1_000_000  # ToMilliseconds, without its Python call
        self.events += 1
        if ev.sequence > self.last_sequence or self.last_sequence < 0:
            self.last_sequence = ev.sequence
        self.kind_counts[kind] = self.kind_counts.get(kind, 0) + 1
        if not self.run_id:
            self.run_id = ev.run_id
        # (on every event's path: no call for what is one comparison, or one more event in
        # the current second of the rate)
        if ms > self.last_event_ms:
            self.last_event_ms = ms
        rate = self._rate
        if rate and rate[-1][0] == ms // 1000:
            rate[-1][1] += 1
        else:
            self._count_rate(ms)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            try:
                handler(self, getattr(ev, kind), ms)
            except (GoldfiveError, ValueError, KeyError, IndexError, TypeError):
                # An event whose payload does not fit (written by a buggy or hostile peer):
                # counted, and the fold goes on; one event never stops a view of the run.
                self.malformed += 1

    def _count_rate(self, ms: int) -> None:
        sec = ms // 1000
        if self._rate and self._rate[-1][0] == sec:
            self._rate[-1][1] += 1
            return
        self._rate.append([sec, 1])
        while len(self._rate) > _RATE_WINDOW_S + 1:
            self._rate.popleft()

    # run lifecycle
    def _run_started(self, p: pb.RunStarted, ms: int) -> None:
        self.goal_summary = p.goal_summary or self.goal_summary
        self.started_ms = ms

    def _run_resumed(self, p: pb.RunResumed, ms: int) -> None:
        # The tasks the crash cut off run again; what they were waiting on is asked again.
        for tid in p.interrupted_task_ids:
            t = self.tasks.get(tid)
            if t is not None:
                t.status, t.reason, t.ended_ms = TaskStatus.PENDING, "interrupted: runs again", 0
        for target in p.pending_approval_ids:
            self.approvals.pop(target, None)
        self.paused = p.paused
        if p.paused and not self.pause_kind:
            self.pause_kind, self.paused_ms = "PAUSE", ms
        elif not p.paused:
            self.pause_kind, self.paused_ms = "", 0
        self.resumes = p.resume_count
        self.recording_error = ""

    def _recording_failed(self, p: pb.RecordingFailed, ms: int) -> None:
        if self.pause_kind != "RECORDING":
            self.pause_kind, self.paused_ms = "RECORDING", ms
        self.paused = True
        self.recording_error = p.detail or "a commit failed"

    def _budget_reached(self, p: pb.BudgetReached, ms: int) -> None:
        if self.pause_kind not in ("BUDGET", "RECORDING"):
            self.pause_kind, self.paused_ms = "BUDGET", ms
        self.paused = True
        self.budget_reached = f"budget reached, {p.detail}" if p.detail else "budget reached"
        self.budget_pause = BudgetPauseView(p.limit, p.used, p.allowed, p.detail, self.last_sequence, ms)

    def _budget_changed(self, p: pb.BudgetChanged, ms: int) -> None:
        self.budget = {name: float(getattr(p.budget, name)) for name in LIMITS if p.budget.HasField(name)}
        self.budget_warning = ""

    def _budget_warning(self, p: pb.BudgetWarning, ms: int) -> None:
        self.budget_warning = p.detail

    def _agent_step(self, p: pb.AgentStep, ms: int) -> None:
        if p.step == "tool_call":
            self.tool_calls += 1

    def _goal_derived(self, p: pb.GoalDerived, ms: int) -> None:
        self.goals = [g.summary for g in p.goals]
        if not self.goal_summary and self.goals:
            self.goal_summary = self.goals[0]

    def _run_completed(self, p: pb.RunCompleted, ms: int) -> None:
        self._finish("COMPLETED", ms)
        self.outcome = p.outcome_summary

    def _run_aborted(self, p: pb.RunAborted, ms: int) -> None:
        self._finish("ABORTED", ms)
        self.abort_reason = p.reason

    def _finish(self, how: str, ms: int) -> None:
        self.finished = how
        self.ended_ms = ms
        self.paused = False
        self.pause_kind, self.paused_ms = "", 0
        self.approvals.clear()  # nobody can answer them any more

    # plans
    def _plan_submitted(self, p: pb.PlanSubmitted, ms: int) -> None:
        self._load_plan(p.plan)

    def _plan_revised(self, p: pb.PlanRevised, ms: int) -> None:
        self._load_plan(p.plan)
        control_id = self._drift_control.pop(p.drift_id, "") if p.drift_id else ""
        if not control_id and conv.drift_kind_from_pb(p.plan.revision_kind) == DriftKind.USER_STEER:
            # No drift link: credit the oldest STEER that has no revision yet and that a replan
            # follows (or whose ack has not come yet).
            control_id = next((c.id for c in self.controls.values() if c.kind == "STEER" and c.revision is None and _replans(c)), "")
        if control_id and control_id in self.controls:
            self.controls[control_id].revision = self.revision

    def _load_plan(self, plan: Any) -> None:
        self.revision = plan.revision_index
        self.plan_summary = plan.summary
        deps: dict[str, list[str]] = {}
        for e in plan.edges:
            deps.setdefault(e.to_task_id, []).append(e.from_task_id)
        old = self.tasks
        tasks: dict[str, TaskView] = {}
        for t in plan.tasks:
            status = conv.task_status_from_pb(t.status) if t.status else TaskStatus.PENDING
            prev = old.get(t.id)
            if prev is None:
                view = TaskView(id=t.id, title=t.title, added_revision=self.revision)
            else:
                view = prev
                view.title = t.title
            view.description = t.description
            view.status = status
            view.deps = tuple(deps.get(t.id, ()))
            tasks[t.id] = view
        self.tasks = tasks
        self.task_order = list(tasks)

    # tasks
    def _task(self, task_id: str) -> TaskView | None:
        return self.tasks.get(task_id)

    def _task_started(self, p: pb.TaskStarted, ms: int) -> None:
        if t := self._task(p.task_id):
            t.status = TaskStatus.RUNNING
            t.started_ms, t.ended_ms, t.reason = ms, 0, ""

    def _task_progress(self, p: pb.TaskProgress, ms: int) -> None:
        if t := self._task(p.task_id):
            t.progress = p.detail or t.progress
            if p.HasField("fraction"):
                t.fraction = p.fraction

    def _task_completed(self, p: pb.TaskCompleted, ms: int) -> None:
        if t := self._task(p.task_id):
            t.status, t.ended_ms, t.result = TaskStatus.COMPLETED, ms, p.result_summary

    def _task_failed(self, p: pb.TaskFailed, ms: int) -> None:
        if t := self._task(p.task_id):
            t.status, t.ended_ms, t.reason = TaskStatus.FAILED, ms, p.reason

    def _task_cancelled(self, p: pb.TaskCancelled, ms: int) -> None:
        if t := self._task(p.task_id):
            t.status, t.ended_ms, t.reason = TaskStatus.CANCELLED, ms, p.reason

    def _task_blocked(self, p: pb.TaskBlocked, ms: int) -> None:
        if t := self._task(p.task_id):
            t.status, t.reason = TaskStatus.BLOCKED, p.blocker

    def _task_transitioned(self, p: pb.TaskTransitioned, ms: int) -> None:
        t = self._task(p.task_id)
        if t is None or not p.to_status:
            return
        status = conv.task_status_from_pb(p.to_status)
        t.status = status
        t.reason = p.reason
        if status == TaskStatus.PENDING:  # rewound: its earlier run no longer counts
            t.started_ms = t.ended_ms = 0
            t.result = t.progress = ""
        elif status == TaskStatus.RUNNING and not t.started_ms:
            t.started_ms = ms
        elif status.is_terminal:
            t.ended_ms = ms

    def _usage_recorded(self, p: pb.UsageRecorded, ms: int) -> None:
        r = recorded_from_pb(p)
        self.usage = self.usage.plus(r.usage, r.cost_usd)
        if r.task_id and (t := self._task(r.task_id)):
            t.usage = t.usage.plus(r.usage, r.cost_usd)
        if r.cost_usd:
            self._burn.append((ms, r.cost_usd))
            while self._burn and self._burn[0][0] < ms - _BURN_WINDOW_MS:
                self._burn.popleft()

    # drift and approvals
    def _drift_detected(self, p: pb.DriftDetected, ms: int) -> None:
        kind = str(conv.drift_kind_from_pb(p.kind))
        view = DriftView(
            id=p.id,
            kind=kind,
            severity=str(conv.drift_severity_from_pb(p.severity)),
            detail=p.detail,
            task_id=p.current_task_id,
            at_ms=ms,
            evidence=tuple(_evidence_line(e) for e in p.evidence),
        )
        self.drifts.append(view)
        if kind == DriftKind.USER_STEER and p.id and p.annotation_id in self.controls:
            self._drift_control[p.id] = p.annotation_id

    def _approval_requested(self, p: pb.ApprovalRequested, ms: int) -> None:
        self.approvals[p.target_id] = ApprovalView(
            target_id=p.target_id,
            kind=p.kind,
            prompt=p.prompt,
            task_id=p.task_id,
            tool_name=p.tool_name,
            args=parse_args(p.args_json),
            args_json=p.args_json,
            requested_ms=ms,
            timeout_ms=p.timeout_ms,
            parameters_json=p.parameters_json,
            on_timeout=p.on_timeout,
            sequence=self.last_sequence,  # apply() set it to this event's
            editable=p.metadata.get("editable") != "false",
            under_review=p.under_review,
        )

    def _approval_reminded(self, p: pb.ApprovalReminded, ms: int) -> None:
        view = self.approvals.get(p.target_id)
        if view is not None:
            self.approvals[p.target_id] = replace(view, reminders=max(view.reminders, p.reminder))

    def _approval_reviewed(self, p: pb.ApprovalReviewed, ms: int) -> None:
        view = self.approvals.get(p.target_id)
        if view is not None:
            why = p.reason or (f"the reviewer could not decide: {p.error}" if p.error else "")
            self.approvals[p.target_id] = replace(view, review=p.decision, review_reason=why, reviewed_ms=ms or 1)

    def _approval_escalated(self, p: pb.ApprovalEscalated, ms: int) -> None:
        view = self.approvals.get(p.target_id)
        if view is not None:
            self.approvals[p.target_id] = replace(view, escalated_ms=ms or 1)

    def _question_asked(self, p: pb.QuestionAsked, ms: int) -> None:
        view = self.approvals.get(p.target_id)
        if view is not None:  # the approval_requested (kind "question") came just before
            self.approvals[p.target_id] = replace(view, options=tuple(p.options), free_text=p.free_text, prompt=p.prompt or view.prompt)

    def _approval_resolved(self, p: pb.ApprovalGranted | pb.ApprovalRejected | pb.QuestionAnswered, ms: int) -> None:
        self.approvals.pop(p.target_id, None)

    # controls
    def _control_received(self, p: pb.ControlReceived, ms: int) -> None:
        try:
            msg = conv.from_pb_control_event(p.control)
        except ConversionError:  # a malformed payload still shows up, without its summary
            msg = ControlMessage(kind=p.kind or "UNKNOWN", id=p.control.id)
        view = self.control_sent(msg, ms)
        view.kind = p.kind or view.kind
        view.author = p.author or view.author
        self.notes.received(p)  # an earlier STEER can be made standing

    def _control_acked(self, p: pb.ControlAcked, ms: int) -> None:
        self.control_ack(conv.from_pb_control_ack(p.ack), p.kind)



def _replans(view: ControlView) -> bool:
    if not view.acked:
        return True
    return view.applied_as is not None and ACK_MEANING[view.applied_as].follows is Follows.REPLAN


def _evidence_line(e: pb.DriftEvidence) -> tuple[int, str]:
    ms = e.at.seconds * 1000 + e.at.nanos // 1_000_000
    if e.what == "tool_call":
        return ms, f"{e.tool_name}({e.args_json[:120]})"
    return ms, f"{e.what}: {e.text[:120]}"


_HANDLERS: dict[str, Callable[[RunState, Any, int], None]] = {
    "usage_recorded": RunState._usage_recorded,
    "run_resumed": RunState._run_resumed,
    "recording_failed": RunState._recording_failed,
    "budget_reached": RunState._budget_reached,
    "budget_changed": RunState._budget_changed,
    "budget_warning": RunState._budget_warning,
    "agent_step": RunState._agent_step,
    "run_started": RunState._run_started,
    "goal_derived": RunState._goal_derived,
    "run_completed": RunState._run_completed,
    "run_aborted": RunState._run_aborted,
    "plan_submitted": RunState._plan_submitted,
    "plan_revised": RunState._plan_revised,
    "task_started": RunState._task_started,
    "task_progress": RunState._task_progress,
    "task_completed": RunState._task_completed,
    "task_failed": RunState._task_failed,
    "task_cancelled": RunState._task_cancelled,
    "task_blocked": RunState._task_blocked,
    "task_transitioned": RunState._task_transitioned,
    "drift_detected": RunState._drift_detected,
    "approval_requested": RunState._approval_requested,
    "approval_granted": RunState._approval_resolved,
    "approval_rejected": RunState._approval_resolved,
    "approval_reminded": RunState._approval_reminded,
    "approval_escalated": RunState._approval_escalated,
    "approval_reviewed": RunState._approval_reviewed,
    "question_asked": RunState._question_asked,
    "question_answered": RunState._approval_resolved,
    "control_received": RunState._control_received,
    "control_acked": RunState._control_acked,
    # The steer queue and the standing guidance (goldfive.steering), folded by RunState.notes.
    "steer_queued": lambda self, p, ms: self.notes.on_steer_queued(p),
    "steer_queue_changed": lambda self, p, ms: self.notes.on_steer_queue_changed(p),
    "guidance_added": lambda self, p, ms: self.notes.on_guidance_added(p),
    "guidance_removed": lambda self, p, ms: self.notes.on_guidance_removed(p),
}
