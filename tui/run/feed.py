"""RunFeed: what the run screen knows of its run, folded from its events; no Textual here.

``follow`` reads a RunSource (history, then live); each event goes into one ``RunState`` (the
reducer replay and the server use) and, unless it is about a control sent from this screen,
becomes one log line. A control sent from here is one
line, rewritten when its ack (and for STEER the plan revision) arrives. What deserves an alert
(a new approval, a CRITICAL drift, a deadline near) is collected here and raised by the screen
once per repaint, so a backlog of history never rings for what was answered long ago.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, NamedTuple

from goldfive import conv
from goldfive.approvals.ledger import LedgerEntry
from goldfive.approvals.recorded import RecordedRules
from goldfive.control import ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.run.approvals import WITHDRAWN
from goldfive.types import DriftKind
from goldfive.view import ControlView, RunState

from ..format import LogLine, clip, clock_text, control_line, describe

if TYPE_CHECKING:
    from ..source import RunSource

__all__ = ["Alert", "Fold", "RunFeed", "approval_name"]

#: Events applied between yields to the event loop while a backlog is drained.
_BATCH = 256

Severity = Literal["information", "warning", "error"]


class Fold(NamedTuple):
    """What one event (or a gap, or the stream's failure) changes on screen."""

    #: The new log line; None when the event belongs to a control sent from here.
    line: LogLine | None
    #: Controls whose line must be rewritten (their ack, or the plan revision they made).
    rewrite: list[str]
    #: The run has just ended (its control keys go).
    ended: bool = False
    #: ``line`` is a control received from elsewhere (another client, or history): the id the
    #: screen files its index under (``placed``), so the ack rewrites that line.
    control: str = ""


@dataclass(frozen=True)
class Alert:
    title: str
    message: str
    severity: Severity


@dataclass
class _Pending:
    approvals: list[str] = field(default_factory=list)
    critical: list[str] = field(default_factory=list)
    expiring: list[str] = field(default_factory=list)
    #: Budget warnings (a limit 80% used or more), each with its share of the limit, in words.
    warnings: list[tuple[float, str]] = field(default_factory=list)
    #: Budget limits reached, in words.
    reached: list[str] = field(default_factory=list)


def share_used(share: float) -> str:
    """A limit's share as the warning's detail gives it ("90%"), never "100%" short of the limit."""
    text = f"{share:.0%}"
    return "99%" if share < 1 and text == "100%" else text


def approval_name(state: RunState, target: str) -> str:
    """The tool's name first: a target id is often an opaque call id."""
    view = state.approvals.get(target)
    return f"{view.tool_name} ({target})" if view and view.tool_name and view.tool_name != target else target


def _control_id(ev: Event, kind: str | None) -> str:
    if kind == "control_received":
        return ev.control_received.control.id
    if kind == "control_acked":
        return ev.control_acked.ack.control_id
    return ""


class RunFeed:
    def __init__(self, state: RunState | None = None) -> None:
        self.state = state if state is not None else RunState()
        #: Controls sent from here: control id -> their log line (index, time shown).
        self.mine: dict[str, tuple[int, str]] = {}
        #: Those whose ack is on their line already.
        self.acked: set[str] = set()
        #: Controls received from elsewhere (another client, a recording): control id -> their
        #: log line (index, time shown), once the screen has placed it; the ack rewrites it.
        self.others: dict[str, tuple[int, str]] = {}
        self._unplaced: dict[str, str] = {}
        #: task id -> the tool calls rejected in it ("publish_deck: too early"); the reducer
        #: forgets an approval once answered, so the screen keeps what a REJECT did to a task.
        self.rejected: dict[str, list[str]] = {}
        #: The run's approval decisions as they arrived (approval_decided events).
        self.ledger: list[LedgerEntry] = []
        #: The reviewer's verdict per approval not decided yet, for its ledger entry.
        self._reviews: dict[str, tuple[str, str]] = {}
        #: The rules the run made, from its events: what the rules screen lists once it ended.
        self.rules = RecordedRules()
        self.stream_note = ""
        self.connection_note = ""  # remote sources: where the link is, always visible
        #: Approvals the person was shown before this screen opened (the runs screen's waiting
        #: queue): not announced again when the run's history brings them.
        self.shown_elsewhere: set[str] = set()
        self._pending = _Pending()

    def at(self, ms: int) -> str:
        """``ms`` as time since the run started, as the log and the header show it."""
        return clock_text(ms - self.state.started_ms) if self.state.started_ms else "--:--"

    # -- events ----------------------------------------------------------------------------
    async def follow(self, source: RunSource, now_ms: Callable[[], int]) -> AsyncIterator[Fold]:
        """Start ``source`` and fold what it yields until its stream ends. A broken stream is
        one failed line and a note in the header, never an exception: the screen stays up."""
        await source.start()
        n = 0
        try:
            async for item in source.events():
                if isinstance(item, Event):
                    yield self.apply(item)
                else:  # a Missed marker: events this reader lost
                    count, first, last = item.count, item.first_sequence, item.last_sequence
                    yield Fold(self.missed(count, first, last, self.at(now_ms())), [])
                n += 1
                if n % _BATCH == 0:
                    await asyncio.sleep(0)  # let keys and repaints in during a backlog
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: a broken stream is shown, the UI stays up
            self.stream_note = f"(event stream failed: {exc})"
            yield Fold(LogLine(self.at(now_ms()), "stream", f"failed: {exc}", "fail"), [])
        else:
            if not self.state.finished:
                self.stream_note = "(event stream ended)"

    def apply(self, ev: Event) -> Fold:
        """Fold ``ev``: its log line, and the controls whose line must be rewritten."""
        kind = ev.WhichOneof("payload")
        if kind == "approval_rejected":
            self._note_rejection(ev)
        self.state.apply(ev)
        if kind in ("approval_requested", "control_received", "control_acked"):
            self.rules.apply(ev)
        control_id = _control_id(ev, kind)
        if control_id in self.mine:  # folded into the control's own line
            if kind != "control_acked":
                return Fold(None, [])
            self.acked.add(control_id)  # shown by the line itself: no toast when the send returns
            return Fold(None, [control_id])
        if control_id and kind == "control_acked" and (control_id in self.others or control_id in self._unplaced):
            return Fold(None, [control_id])  # one line per control, as for one sent from here
        if control_id and kind == "control_received":
            view = self.state.controls.get(control_id)
            if view is not None:
                at = self.at(ev.emitted_at.ToMilliseconds())
                self._unplaced[control_id] = at
                return Fold(control_line(view, at, received=True), [], control=control_id)
        label, text, style = describe(ev)
        line = LogLine(self.at(ev.emitted_at.ToMilliseconds()), label, text, style, ev)
        rewrite: list[str] = []
        if kind == "approval_requested":
            self._pending.approvals.append(ev.approval_requested.target_id)
        elif kind == "drift_detected" and style == "drift-critical" and not self._cancelled_here(ev):
            self._pending.critical.append(ev.drift_detected.detail)
        elif kind == "plan_revised":
            rewrite = [cid for cid in self.mine if (v := self.state.controls.get(cid)) is not None and v.revision is not None]
        elif kind == "approval_reviewed":
            r = ev.approval_reviewed
            self._reviews[r.target_id] = (r.decision, r.reason or (f"could not decide: {r.error}" if r.error else ""))
            if r.decision == "ask":  # now it needs a person
                self._pending.approvals.append(r.target_id)
        elif kind == "approval_decided":
            entry = LedgerEntry.from_event(ev)
            review = self._reviews.pop(entry.target_id, None)
            if review is not None:  # as ledger_of says it: what the reviewer said before the decision
                entry = replace(entry, review=review[0], review_reason=review[1])
            self.ledger.append(entry)
        elif kind == "approval_expiring":
            self._pending.expiring.append(ev.approval_expiring.target_id)
        elif kind == "budget_warning":
            w = ev.budget_warning
            self._pending.warnings.append((w.used / w.allowed if w.allowed > 0 else 0.0, f"{w.detail} used"))
        elif kind == "budget_reached":
            self._pending.reached.append(f"paused: {ev.budget_reached.detail}. $ raises the budget")
        return Fold(line, rewrite, kind in ("run_completed", "run_aborted"))

    def missed(self, count: int, first: int, last: int, at: str) -> LogLine:
        self.state.apply_missed(count)
        return LogLine(at, "missed", f"{count} events ({first}..{last}) were dropped", "fail")

    def _note_rejection(self, ev: Event) -> None:
        """Keep a person's rejection on its task; a request withdrawn because its invocation
        was cancelled (STEER, CANCEL) or one that timed out was nobody's decision."""
        p = ev.approval_rejected
        if p.detail.startswith((WITHDRAWN, "timeout")):
            return
        view = self.state.approvals.get(p.target_id)
        if view is not None and view.task_id:
            name = view.tool_name or p.target_id
            self.rejected.setdefault(view.task_id, []).append(f"{name}: {p.detail}" if p.detail else name)

    def _cancelled_here(self, ev: Event) -> bool:
        """A USER_CANCEL drift after our own CANCEL: its ack already said so, no alarm."""
        if conv.drift_kind_from_pb(ev.drift_detected.kind) != DriftKind.USER_CANCEL:
            return False
        return any(self.state.controls[c].kind == "CANCEL" for c in self.mine if c in self.state.controls)

    # -- controls sent from here -------------------------------------------------------------
    def sent(self, msg: ControlMessage, index: int, at: str) -> LogLine:
        """``msg`` goes out now as log line ``index``: its line, saying it waits for the ack."""
        view = self.state.control_sent(msg, msg.issued_at_ms)
        self.mine[msg.id] = (index, at)
        return control_line(view, at)

    def placed(self, control_id: str, index: int) -> None:
        """The line of a control received from elsewhere is log line ``index``."""
        at = self._unplaced.pop(control_id, None)
        if at is not None:
            self.others[control_id] = (index, at)

    def control_line(self, control_id: str) -> tuple[int, LogLine, bool] | None:
        """The control's line as of now: (index, line, True when its ack shows for the first time).
        For a control received from elsewhere the flag is always False (nobody waits on a toast)."""
        view = self.state.controls.get(control_id)
        other = self.others.get(control_id)
        if other is not None and view is not None:
            return other[0], control_line(view, other[1], received=True), False
        where = self.mine.get(control_id)
        if where is None or view is None:
            return None
        index, at = where
        first = view.acked and control_id not in self.acked
        if view.acked:
            self.acked.add(control_id)
        return index, control_line(view, at), first

    def refusal(self, view: ControlView) -> str:
        """What a refusal says in its toast ("" when the control was applied)."""
        if view.ack_result == "SUCCESS":
            return ""
        detail = f": {view.ack_detail}" if view.ack_detail else ""
        return f"{view.kind} {view.ack_result}{detail}"

    # -- alerts ------------------------------------------------------------------------------
    def take_alerts(self) -> tuple[list[Alert], bool]:
        """What to tell the person since the last call, and whether to ring the bell."""
        pending, self._pending = self._pending, _Pending()
        state = self.state
        out: list[Alert] = []
        for target in [t for t in pending.expiring if t in state.approvals][-3:]:
            view = state.approvals[target]
            out.append(Alert("Approval deadline near", f"{approval_name(state, target)}: {view.on_timeout} soon unless decided", "warning"))
        # Not one the run's reviewer has: a person hears of it when the reviewer asks.
        waiting = list(dict.fromkeys(
            t for t in pending.approvals if t in state.approvals and not state.approvals[t].with_reviewer and t not in self.shown_elsewhere
        ))  # fmt: skip
        for target in waiting[-3:]:
            view = state.approvals[target]
            title = "Question for you" if view.is_question else "Approval needed"
            asks = f" (the reviewer asks you: {view.review_reason})" if view.review == "ask" and view.review_reason else ""
            out.append(Alert(title, f"{approval_name(state, target)}: {view.prompt}{asks}", "warning"))
        critical = pending.critical
        if critical:
            title = "CRITICAL drift" if len(critical) == 1 else f"{len(critical)} CRITICAL drifts"
            out.append(Alert(title, clip(critical[-1], 120), "error"))
        if pending.warnings:  # one toast, titled by the limit nearest to being reached
            nearest = sorted(pending.warnings, key=lambda w: -w[0])
            out.append(Alert(f"Budget {share_used(nearest[0][0])} used", "; ".join(text for _, text in nearest[:2]), "warning"))
        if pending.reached:
            out.append(Alert("Budget reached", pending.reached[-1], "error"))
        return out, bool(waiting or critical or pending.reached)
