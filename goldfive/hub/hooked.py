"""Sessions of an agent the hub sees through its hooks (Claude Code: ``goldfive hook
claude-code``), served like any other run.

A hook process lives for one hook event, so nothing holds a stream: each event is one
``Hub.Hook`` call, and the hub writes the session's events itself (a :class:`HookAttachment`
numbers them). A tool call that needs a person is an approval like any run's: it shows in the
runs screen, the waiting queue and ``ctl waiting``, the session's rules for "always" and the
never-auto list apply first, and APPROVE / REJECT (from any client, through the run's
:class:`HookRoute`) answer the hook that holds the call open. Every decision is in the ledger,
written by the hub, so it is "routed" by construction. No decision within the hook's wait
answers "ask": the agent asks its own user, never "allow".

Who may call: a runner token (or an operator); a session belongs to the credential that first
reported it, as a connected run does (goldfive.hub.trust).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from goldfive import events
from goldfive.approvals.desk import ApprovalDesk
from goldfive.approvals.ledger import BY_GOLDFIVE, BY_RULE, Outcome
from goldfive.control import AckResult, AppliedAs, ControlAck, ControlKind, ControlMessage
from goldfive.controls.payloads import Always, Approve, Reject, decode
from goldfive.errors import ControlPayloadError
from goldfive.hub.trust import ROUTED
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote.host import Origin, ServedRun
from goldfive.remote.route import RUN_NOT_ACTIVE, NotLive
from goldfive.run.approval_rules import rule_from_always
from goldfive.sinks.memory import InMemorySink
from goldfive.store.recorder import HubRecorder
from goldfive.types import Session

__all__ = ["EVENTS", "HookAttachment", "HookRoute", "MAX_WAIT_S", "SOURCES", "hook_of", "hook_problem", "run_id_for"]

log = logging.getLogger("goldfive.hub")

#: The agents whose hooks the hub takes, and the run id prefix of their sessions.
SOURCES = {"claude-code": "cc-"}
#: The hook events it understands (Claude Code's names).
EVENTS = frozenset(
    {"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Notification", "Stop", "SubagentStop", "SessionEnd"}
)  # fmt: skip
#: The longest a hook may hold a call open waiting for a person.
MAX_WAIT_S = 3600.0
#: The largest tool input or output kept from a report (a file's whole content, say).
MAX_TOOL_JSON = 64 * 1024


def run_id_for(source: str, session_id: str) -> str:
    return SOURCES[source] + session_id


@dataclass(frozen=True)
class _Decision:
    approve: bool
    reason: str = ""
    arguments: dict[str, Any] | None = None
    author: str = ""
    client: str = ""
    control_id: str = ""
    always: Always | None = None


class HookRoute:
    """APPROVE and REJECT answer the tool call a hook holds open; nothing else reaches a
    session whose agent only talks through hooks (UNSUPPORTED, in words)."""

    live = True

    def __init__(self, hooked: HookAttachment) -> None:
        self.hooked = hooked

    async def send(self, msg: ControlMessage, timeout: float) -> ControlAck:
        if msg.kind is ControlKind.STATUS_QUERY:
            state = self.hooked.run.state
            return ControlAck(msg.id, AckResult.SUCCESS, f"{state.phase}; {len(self.hooked.waiting)} call(s) waiting for a person", applied_as=AppliedAs.STATUS)
        if msg.kind not in (ControlKind.APPROVE, ControlKind.REJECT):
            name = msg.kind.value if isinstance(msg.kind, ControlKind) else str(msg.kind)
            return ControlAck(
                msg.id, AckResult.UNSUPPORTED,
                f"{name} cannot reach a {self.hooked.source} session: its hooks take approvals and rejections only",
            )  # fmt: skip
        try:
            c = decode(msg)
        except ControlPayloadError as exc:
            return ControlAck(msg.id, AckResult.FAILURE, f"malformed {msg.kind}: {exc}")
        p = c.payload
        assert isinstance(p, (Approve, Reject))
        waiter = self.hooked.waiting.get(p.target_id)
        if waiter is None or waiter.done():
            return ControlAck(msg.id, AckResult.FAILURE, f"no call {p.target_id!r} waits for a decision (decided already, or its hook gave up)")
        approve = isinstance(p, Approve)
        decision = _Decision(
            approve=approve, reason=p.detail, author=p.author, client=p.client, control_id=msg.id,
            arguments=dict(p.arguments) if isinstance(p, Approve) and p.arguments is not None else None,
            always=p.always if isinstance(p, Approve) else None,
        )  # fmt: skip
        waiter.set_result(decision)
        return ControlAck(
            msg.id, AckResult.SUCCESS, "approved: the call runs" if decision.approve else "rejected: the agent is told why",
            applied_as=AppliedAs.DECIDED,
        )


class HookAttachment:
    """What a :class:`~goldfive.remote.host.ServedRun` of origin HOOKED holds as its
    ``attachment``: one agent session seen through its hooks (see the module's docstring), the
    calls its hooks hold open, its rules, and its :class:`HookRoute`. Find a served run's with
    :func:`hook_of`."""

    def __init__(self, run: ServedRun, source: str, recorder: HubRecorder, commit: Callable[[], Awaitable[bool]] | None = None) -> None:
        self.run = run
        #: The agent that reports through its hooks ("claude-code"): what its summary's origin says.
        self.source = source
        self.session = Session(run_id=run.run_id)
        #: The agent's machine and process, from its reports.
        self.host = ""
        self.pid = 0
        self.connection = "connected"
        self.hub = ""
        #: Tool calls held open by their hook, by tool_use id.
        self.waiting: dict[str, asyncio.Future[_Decision]] = {}
        #: The session's rules for "always" (run scope) and the machine's saved ones.
        self.desk = ApprovalDesk(use_machine_rules=True)
        #: Makes what was emitted durable (the hub's group commit, done now: hooks are few).
        self._commit = commit
        run.origin = Origin.HOOKED
        run.recorder = recorder
        run.memory = InMemorySink()
        run.route = HookRoute(self)
        run.attachment = self

    @classmethod
    def new(cls, run_id: str, source: str, recorder: HubRecorder, commit: Callable[[], Awaitable[bool]] | None = None) -> HookAttachment:
        """A new served run for session ``run_id``, and its attachment."""
        return cls(ServedRun(run_id), source, recorder, commit)

    @classmethod
    def from_recorded(cls, old: ServedRun, source: str, recorder: HubRecorder, commit: Callable[[], Awaitable[bool]] | None = None) -> HookAttachment:
        """A session the hub recorded before a restart, going on as its hooks report again."""
        att = cls.new(old.run_id, source, recorder, commit)
        run = att.run
        run.history = old.history
        if old.history is not None:
            run.fold_history()
        else:
            for ev in old.events_after(-1):
                run.fold(ev)
        att.session.continue_after(run.state.last_sequence)
        return att

    @property
    def run_id(self) -> str:
        return self.run.run_id

    label = ""  # the run's own phase
    interrupted = False

    @property
    def ingest_refusal(self) -> str:
        return f"run {self.run.run_id!r} is a {self.source} session written from its hooks; its events cannot also be pushed"

    @property
    def live(self) -> bool:
        return not self.run.state.finished

    async def _emit(self, ev: Event) -> None:
        """Record, fold, tell the hooks (notifications) and serve one event the hub wrote."""
        assert self.run.recorder is not None
        await self.run.recorder.emit(ev)
        self.run.fold(ev)
        for hook in self.run.hooks:
            hook(ev)
        if self.run.memory is not None and not self.run.memory.closed:
            await self.run.memory.emit(ev)

    async def commit(self) -> None:
        if self._commit is not None:
            await self._commit()

    # -- reports -------------------------------------------------------------------------
    async def report(self, r: service_pb2.HookReport) -> service_pb2.HookAnswer:
        """Write what the hook says happened; for a call a person decides, wait (at most
        ``r.wait_ms``) for the decision and answer it. What it wrote is committed before it
        waits and before it answers."""
        try:
            return await self._report(r)
        finally:
            await asyncio.shield(self.commit())

    async def _report(self, r: service_pb2.HookReport) -> service_pb2.HookAnswer:
        answer = service_pb2.HookAnswer(run_id=self.run.run_id)
        if self.run.state.finished:
            return answer  # the session ended: a late hook changes nothing
        self.host, self.pid = r.host[:255] or self.host, r.pid or self.pid
        tool_input = _json_object(r.tool_json)
        if self.run.state.last_sequence < 0:
            goal = r.text if r.event == "UserPromptSubmit" and r.text else f"{self.source} session in {r.cwd or '?'}"
            await self._emit(events.run_started(self.session, goal_summary=goal[:1000], user_input=r.text))
        step: dict[str, Any] = {"task_id": "", "framework": self.source}
        if r.event == "UserPromptSubmit":
            await self._emit(events.agent_step(self.session, step="hook", tool_name=r.event, text=r.text, **step))
        elif r.event in ("PreToolUse", "PermissionRequest"):
            if r.event == "PreToolUse":
                await self._emit(
                    events.agent_step(self.session, step="tool_call", tool_name=r.tool_name, call_id=r.tool_use_id, args=tool_input, outcome="asked", **step)
                )  # fmt: skip
            if r.ask:
                return await self._decide(r, tool_input, answer)
        elif r.event == "PostToolUse":
            await self._emit(
                events.agent_step(self.session, step="tool_call", tool_name=r.tool_name, call_id=r.tool_use_id, text=r.tool_json[:2000], outcome="ok", **step)
            )  # fmt: skip
        elif r.event in ("Notification", "Stop", "SubagentStop", "SessionStart"):
            text = r.text or {"Stop": "the agent finished its turn", "SubagentStop": "a subagent finished", "SessionStart": "session started"}.get(r.event, "")
            await self._emit(events.agent_step(self.session, step="hook", tool_name=r.event, text=text, **step))
        elif r.event == "SessionEnd":
            await self._emit(events.run_completed(self.session, r.text or "the session ended"))
            self.run.route, self.connection = NotLive(f"{RUN_NOT_ACTIVE}: the {self.source} session ended"), ""
            if self.run.memory is not None:
                await self.run.memory.close()
        return answer

    async def _decide(self, r: service_pb2.HookReport, args: dict[str, Any], answer: service_pb2.HookAnswer) -> service_pb2.HookAnswer:
        target, tool = r.tool_use_id or f"{r.tool_name}-{self.run.state.last_sequence + 1}", r.tool_name
        rule = self.desk.match(tool, args)
        if rule is not None:
            await self._emit(events.approval_decided(
                self.session, target_id=target, outcome=Outcome.APPROVED_BY_RULE, author=BY_RULE, tool_name=tool,
                requested_args=args, ran_args=args, rule_id=rule.id, rule_author=rule.author, rule_made_at_ms=rule.made_at_ms,
            ))  # fmt: skip
            answer.decision = "allow"
            return answer
        wait_s = min(max(r.wait_ms / 1000, 1.0), MAX_WAIT_S)
        waiter: asyncio.Future[_Decision] = asyncio.get_running_loop().create_future()
        self.waiting[target] = waiter
        await self._emit(events.approval_requested(
            self.session, target_id=target, kind="tool", tool_name=tool, args=args,
            prompt=f"{self.source} wants to run {tool}", timeout_ms=int(wait_s * 1000), on_timeout="ask",
        ))  # fmt: skip
        await self.commit()  # the question is stored before anyone is asked
        try:
            decision = await asyncio.wait_for(asyncio.shield(waiter), wait_s)
        except TimeoutError:
            await self._no_decision(target, tool, args, f"no decision within {wait_s:.0f} s: {self.source} asks its own user")
            answer.decision, answer.reason = "ask", f"no decision in goldfive within {wait_s:.0f} s"
            return answer
        except asyncio.CancelledError:  # the hook went away (the agent gave up on it)
            await self._no_decision(target, tool, args, "the hook stopped waiting")
            raise
        finally:
            self.waiting.pop(target, None)
        return await self._decided(decision, target, tool, args, answer)

    async def _decided(
        self, d: _Decision, target: str, tool: str, args: dict[str, Any], answer: service_pb2.HookAnswer
    ) -> service_pb2.HookAnswer:
        edited = d.approve and d.arguments is not None and d.arguments != args
        added = ""
        if d.approve and d.always is not None:
            try:
                made = self.desk.add_rule(rule_from_always(d.always, tool, {"kind": "tool"}, d.author, int(time.time() * 1000)))
                added = f"rule {made.id} added ({made.describe()}, scope {made.scope})"
            except ValueError as exc:
                added = f"no rule added: {exc}"
        if d.approve:
            await self._emit(events.approval_granted(self.session, target, d.reason or added, arguments=d.arguments if edited else None))
        else:
            await self._emit(events.approval_rejected(self.session, target, d.reason))
        outcome = Outcome.EDITED_APPROVED if edited else Outcome.APPROVED if d.approve else Outcome.REJECTED
        decided = events.approval_decided(
            self.session, target_id=target, outcome=outcome, author=d.author, client=d.client, tool_name=tool,
            requested_args=args, ran_args=(d.arguments if edited else args) if d.approve else None,
            reason=d.reason or added, control_id=d.control_id,
        )  # fmt: skip
        decided.approval_decided.hub_check = ROUTED  # the hub itself took this decision from the person
        await self._emit(decided)
        if d.approve:
            answer.decision = "allow"
            if edited:
                answer.updated_input_json = json.dumps(d.arguments, sort_keys=True)
        else:
            answer.decision, answer.reason = "deny", d.reason or "rejected in goldfive"
        return answer

    async def _no_decision(self, target: str, tool: str, args: dict[str, Any], why: str) -> None:
        await self._emit(events.approval_rejected(self.session, target, why, timed_out=True))
        await self._emit(events.approval_decided(
            self.session, target_id=target, outcome=Outcome.TIMED_OUT, author=BY_GOLDFIVE, tool_name=tool, requested_args=args, reason=why,
        ))  # fmt: skip

    async def close(self) -> None:
        for waiter in self.waiting.values():
            waiter.cancel()
        if self.run.memory is not None:
            await self.run.memory.close()


def _json_object(text: str) -> dict[str, Any]:
    """A tool's input as the hook sent it: a JSON object, else kept as text under "input"."""
    if not text:
        return {}
    if len(text) > MAX_TOOL_JSON:
        return {"input": text[:MAX_TOOL_JSON] + "...(cut)"}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {"input": text}
    return value if isinstance(value, dict) else {"input": value}


def hook_problem(r: service_pb2.HookReport) -> str:
    """Why a hook report is refused, or "" (INVALID_ARGUMENT, in words)."""
    from goldfive.hub.limits import run_id_problem

    if r.source not in SOURCES:
        return f"unknown hook source {r.source[:40]!r}: the hub takes {', '.join(sorted(SOURCES))}"
    if r.event not in EVENTS:
        return f"unknown hook event {r.event[:40]!r}"
    if not r.session_id:
        return "the report names no session id"
    problem = run_id_problem(run_id_for(r.source, r.session_id))
    return f"session id: {problem}" if problem else ""


def hook_of(run: ServedRun | None) -> HookAttachment | None:
    """The hooks part of ``run`` (an agent session), or None for any other run."""
    att = run.attachment if run is not None else None
    return att if isinstance(att, HookAttachment) else None
