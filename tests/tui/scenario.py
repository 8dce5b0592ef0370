"""A scripted, deterministic run (the DESIGN section 5 slide-deck story) as real events.

Used by the snapshot and Pilot tests, the benches and ``scripts/preview.py``; not shipped. Every event comes from the
real factories in ``goldfive.events`` on a ``Session`` whose clock this script moves by hand, so
the same calls always give the same events (up to the random event-id suffix, never shown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from goldfive import events as E
from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage, kind_name
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Plan, Session, Task, TaskEdge, TaskStatus

if TYPE_CHECKING:
    from .scripted import ScriptedSource

#: 2026-01-01T00:00:00Z: a fixed epoch so every run of the script gives the same times.
T0_MS = 1_767_225_600_000
RUN_ID = "3f9c2a7b41d04e5f"
GOAL = "build me a slide deck about Python"


class ScriptClock:
    """A clock that only moves when told to."""

    def __init__(self, start_ms: int = T0_MS) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now


def _task(tid: str, title: str, desc: str, status: TaskStatus = TaskStatus.PENDING) -> Task:
    return Task(id=tid, title=title, description=desc, status=status)


class DemoScript:
    """Builds the story's events step by step; each method returns the events of one step."""

    def __init__(self, run_id: str = RUN_ID) -> None:
        self.clock = ScriptClock()
        self.session = Session(run_id=run_id, clock=self.clock)
        self.revision = 0

    def _at(self, dt_ms: int, ev_factory, *args, **kwargs) -> Event:  # type: ignore[no-untyped-def]
        self.clock.advance(dt_ms)
        return ev_factory(self.session, *args, **kwargs)

    def plan(self, statuses: dict[str, TaskStatus] | None = None, *, steered: bool = False) -> Plan:
        st = statuses or {}
        tasks = [
            _task("research", "research", "Find what the audience already knows about Python."),
            _task("outline", "outline", "Outline the deck: one idea per slide."),
            _task("draft", "draft", "Draft every slide of the outline."),
        ]
        edges = [TaskEdge("research", "outline"), TaskEdge("outline", "draft")]
        last = "draft"
        if steered:
            tasks.append(_task("draft_focused", "draft_focused", "Draft six slides, fewer but better."))
            edges.append(TaskEdge("outline", "draft_focused"))
            last = "draft_focused"
        tasks.append(_task("polish_and_ship", "polish_and_ship", "Polish the slides and publish the deck."))
        edges.append(TaskEdge(last, "polish_and_ship"))
        tasks = [Task(t.id, t.title, t.description, status=st.get(t.id, t.status)) for t in tasks]
        return Plan(
            tasks=tasks,
            edges=edges,
            id="plan-1",
            run_id=self.session.run_id,
            summary=GOAL,
            revision_index=self.revision,
            revision_kind=DriftKind.USER_STEER if steered else "",
            revision_reason="user steer" if steered else "",
        )

    # -- the story -------------------------------------------------------------------------
    def opening(self) -> list[Event]:
        """Run started; research and outline done; draft running."""
        return [
            self._at(0, E.run_started, goal_summary=GOAL, user_input=GOAL),
            self._at(120, E.plan_submitted, self.plan()),
            self._at(80, E.task_started, "research"),
            self._at(900, E.task_progress, "research", detail="read 12 sources", fraction=0.5),
            self._at(1200, E.task_completed, "research", "12 sources on Python's history and uses"),
            self._at(100, E.task_started, "outline"),
            self._at(1400, E.task_completed, "outline", "8 sections, one idea each"),
            self._at(100, E.task_started, "draft"),
            self._at(900, E.drift_detected, DriftEvent(
                id="d1", kind=DriftKind.CONTEXT_PRESSURE, severity=DriftSeverity.INFO,
                detail="context 61% full", task_id="draft")),
            self._at(700, E.task_progress, "draft", detail="slide 3 of 8", fraction=0.37),
        ]

    def control(self, msg: ControlMessage, result: AckResult = AckResult.SUCCESS, detail: str = "") -> list[Event]:
        """How the runtime reacts to a control: received, its effects, acked."""
        msg.issued_at_ms = msg.issued_at_ms or self.clock.now
        out = [self._at(40, E.control_received, msg)]
        kind = msg.kind
        if result == AckResult.SUCCESS:
            out += self._effects(msg)
        ack = ControlAck(msg.id, result, detail, acked_at_ms=self.clock.advance(10))
        out.append(E.control_acked(self.session, ack, kind_name(kind)))
        if result == AckResult.SUCCESS and kind == ControlKind.STEER:
            out.append(self._at(60, E.task_started, "draft_focused"))
        return out

    def _effects(self, msg: ControlMessage) -> list[Event]:
        p = msg.payload
        if msg.kind == ControlKind.PAUSE:
            return [self._at(5, E.drift_detected, DriftEvent(
                id=f"pause-{msg.id}", kind=DriftKind.USER_PAUSE, severity=DriftSeverity.INFO,
                detail="paused by the operator"))]
        if msg.kind == ControlKind.STEER:
            drift_id = f"steer-{msg.id}"
            old = self.plan({"research": TaskStatus.COMPLETED, "outline": TaskStatus.COMPLETED,
                             "draft": TaskStatus.RUNNING})
            self.revision += 1
            new = self.plan({"research": TaskStatus.COMPLETED, "outline": TaskStatus.COMPLETED,
                             "draft": TaskStatus.CANCELLED}, steered=True)
            author = p.get("author", "")
            return [
                self._at(5, E.drift_detected, DriftEvent(
                    id=drift_id, kind=DriftKind.USER_STEER, severity=DriftSeverity.WARNING,
                    detail=f"by {author}: {p.get('note', '')}", task_id="draft", annotation_id=msg.id)),
                self._at(20, E.task_cancelled, "draft", "user_steer"),
                self._at(300, E.plan_revised, old, new, drift_id=drift_id),
            ]
        if msg.kind in (ControlKind.APPROVE, ControlKind.REJECT):
            target = str(p.get("target_id", ""))
            factory = E.approval_granted if msg.kind == ControlKind.APPROVE else E.approval_rejected
            out = [self._at(5, factory, target, str(p.get("detail", "")))]
            if msg.kind == ControlKind.APPROVE:
                out.append(self._at(5, E.task_transitioned, "polish_and_ship",
                                    TaskStatus.BLOCKED, TaskStatus.RUNNING, "approved"))
            return out
        if msg.kind == ControlKind.REWIND_TO:
            tid = str(p.get("task_id", ""))
            return [self._at(5, E.task_transitioned, tid, TaskStatus.COMPLETED, TaskStatus.PENDING,
                             "rewind")]
        if msg.kind == ControlKind.CANCEL:
            return [self._at(5, E.run_aborted, str(p.get("reason", "cancelled")))]
        return []

    def to_approval(self, *, task: str = "draft_focused") -> list[Event]:
        """The draft finishes; publishing the deck waits for approval."""
        return [
            self._at(3000, E.task_completed, task, "6 slides, one idea each"),
            self._at(100, E.task_started, "polish_and_ship"),
            self._at(1200, E.task_blocked, "polish_and_ship", "awaiting approval"),
            self._at(5, E.approval_requested, target_id="publish_deck", kind="tool",
                     prompt="Publish the deck to the team site?", task_id="polish_and_ship",
                     tool_name="publish_deck", args={"slides": 6, "audience": "eng"},
                     timeout_ms=300_000),
        ]

    def finish(self) -> list[Event]:
        return [
            self._at(1500, E.task_completed, "polish_and_ship", "published to the team site"),
            self._at(10, E.run_completed, "deck published"),
        ]


def flatten(*steps: Iterable[Event]) -> list[Event]:
    return [ev for step in steps for ev in step]


def story_source(
    script: DemoScript,
    stage: str = "opening",
    *,
    live: bool = True,
    acks: dict[ControlKind | str, tuple[AckResult, str]] | None = None,
) -> ScriptedSource:
    """The story up to ``stage`` ("opening", "approval", "finished") as a source whose
    controls get the runtime's reaction events. Tests, snapshots and screenshots share it."""
    from .scripted import ScriptedSource

    steps: list[list[Event]] = [script.opening()]
    if stage in ("approval", "finished"):
        steps.append(script.to_approval(task="draft"))
    if stage == "finished":
        steps.append(script.finish())
    return ScriptedSource(
        flatten(*steps),
        live=live,
        title="demo",
        acks=acks,
        react=lambda msg, ack: script.control(msg, ack.result, ack.detail),
        clock=script.clock,
    )
