"""RemoteRuns: the runs of a ``goldfive serve`` hub, as a RunsSource (``goldfive attach ADDR``).

``poll`` asks ListRuns, then ListWaiting for what waits for a person; a server without
ListWaiting (UNIMPLEMENTED) is asked GetRun for each live run's pending approvals instead,
and from then on directly. A run is opened through the existing gRPC source (GrpcRunSource).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from goldfive.control import ControlAck
from goldfive.errors import RemoteError
from goldfive import conv
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.link.client import RemoteClient
from goldfive.view.attention import kind_of_reason, reviewer_holds

from ..grpc_source import GrpcRunSource
from .local import decision
from .model import LIVE_STATES, MarkRefused, RunRow, Snapshot, WaitingItem

__all__ = ["RemoteRuns", "row_from_summary"]


def _ms(ts: Any) -> int:
    return int(ts.ToMilliseconds()) if ts is not None and (ts.seconds or ts.nanos) else 0


def row_from_summary(s: service_pb2.RunSummary, waiting: list[WaitingItem]) -> RunRow:
    """A row from the hub's summary; a server that does not fill ``needs_you`` yet gets it
    derived from its state and the waiting items."""
    state = s.state or "PENDING"
    if s.connection in ("disconnected", "interrupted") and state not in ("COMPLETED", "ABORTED", "CANCELLED"):
        state = s.connection.upper()  # a finished run's runner is gone because it is done
    kind, reason, since = "", s.needs_you, _ms(s.needs_you_since)
    if reason:
        kind = kind_of_reason(reason)
    elif s.acknowledged_by:
        pass  # a failure a person has seen needs nobody
    else:
        mine = [w for w in waiting if w.run_id == s.run_id]
        if mine:
            oldest = min(mine, key=lambda w: w.since_ms)
            kind, since = oldest.kind, oldest.since_ms
            more = f" (+{len(mine) - 1} more)" if len(mine) > 1 else ""
            reason = f"{oldest.kind}: {oldest.what}{more}"
        elif state == "ABORTED":
            kind, reason = "failed", "failed"
        elif state == "PAUSED":
            kind, reason = "paused", "paused"
    return RunRow(
        run_id=s.run_id,
        state=state,
        done=s.tasks_completed,
        total=s.tasks_total,
        current_task=s.current_task,
        started_ms=_ms(s.started_at),
        origin=s.origin or "hosted",
        needs_kind=kind,
        needs_reason=reason,
        needs_since_ms=since,
        goal=_goal(s),
        usage=conv.from_pb_usage_totals(s.usage),
        acknowledged=bool(s.acknowledged_by),
        reviewing="" if kind else reviewer_holds(s),
    )


def _goal(s: service_pb2.RunSummary) -> str:
    """The goal, and for a run the hub placed on a cluster that has not placed it yet
    (``serve --ray``), why not, in the cluster's words."""
    if s.connection.startswith(("pending placement: ", "placement failed: ")):
        return f"{s.goal_summary} [{s.connection}]"
    return s.goal_summary


def _item_from_pb(w: service_pb2.WaitingItem, goal: str = "") -> WaitingItem:
    return WaitingItem(
        w.run_id, w.kind or "approval", w.target_id, w.task_id, w.tool_name, w.args_json, w.prompt, _ms(w.since), goal,
        tuple(w.options), w.free_text or not w.options,
    )  # fmt: skip


class RemoteRuns:
    owns_runs = False

    def __init__(
        self,
        addr: str,
        *,
        token: str | None = None,
        tls_ca: str | Path | None = None,
        tls_client_cert: str | Path | None = None,
        tls_client_key: str | Path | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.addr = addr
        self._clock = clock or (lambda: time.time_ns() // 1_000_000)
        self._first_seen: dict[str, int] = {}
        self.title = f"runs @ {addr}"
        self._token = token
        self._tls = (tls_ca, tls_client_cert, tls_client_key)
        self._client: RemoteClient | None = None
        #: None until known: does the hub answer ListWaiting?
        self.has_list_waiting: bool | None = None
        #: The last list read, and when: kept on screen while the hub is away.
        self._last: Snapshot | None = None
        self._last_ms = 0

    def _open_client(self) -> RemoteClient:
        if self._client is None:  # made on the app's loop, where it is used
            ca, cert, key = self._tls
            self._client = RemoteClient(self.addr, token=self._token, tls_ca=ca, tls_client_cert=cert, tls_client_key=key)
        return self._client

    async def start(self) -> None:
        self._open_client()

    async def stop(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def poll(self) -> Snapshot:
        client = self._open_client()
        try:
            summaries = await client.list_runs(timeout=5.0)
        except RemoteError as exc:
            return self._kept(exc)
        goals = {s.run_id: s.goal_summary for s in summaries}
        problem = f"hub degraded: {client.hub_warning}" if client.hub_warning else ""
        try:
            waiting = await self._waiting(client, summaries, goals)
        except RemoteError as exc:
            waiting, problem = [], " · ".join(p for p in (problem, f"waiting items: {exc}") if p)
        waiting.sort(key=lambda w: (w.since_ms, w.key))
        self._last, self._last_ms = Snapshot([row_from_summary(s, waiting) for s in summaries], waiting, problem), self._clock()
        return self._last

    def _kept(self, exc: RemoteError) -> Snapshot:
        """The hub did not answer: the last list, marked disconnected (the client reconnects
        by itself, within 2 s of the hub being back; the next poll finds it)."""
        why = exc.in_words(self.addr)
        if self._last is None:
            return Snapshot(problem=f"{why}; retrying", disconnected=True)
        age = max(0, self._clock() - self._last_ms) // 1000
        return Snapshot(self._last.rows, self._last.waiting, f"list {age}s old; {why}; retrying", disconnected=True)

    async def _waiting(self, client: RemoteClient, summaries: list[service_pb2.RunSummary], goals: dict[str, str]) -> list[WaitingItem]:
        if self.has_list_waiting is not False:
            try:
                found = await client.list_waiting(timeout=5.0)
                self.has_list_waiting = True
                return [_item_from_pb(w, goals.get(w.run_id, "")) for w in found]
            except RemoteError as exc:
                if exc.code != "UNIMPLEMENTED":
                    raise
                self.has_list_waiting = False  # a server older than the hub: GetRun each live run
        items: list[WaitingItem] = []
        for s in summaries:
            if s.state not in LIVE_STATES:
                continue
            try:
                snap = await client.get_run(s.run_id, timeout=5.0)
            except RemoteError as exc:
                if exc.code == "NOT_FOUND":
                    continue  # gone between the two calls
                raise
            for a in snap.pending_approvals:
                # A snapshot's pending approval has no timestamp: the poll that first saw it stands in.
                since = self._first_seen.setdefault(f"{s.run_id}/{a.target_id}", self._clock())
                kind = "question" if a.kind == "question" else "approval"  # a server without ListWaiting: no options known
                items.append(WaitingItem(s.run_id, kind, a.target_id, a.task_id, a.tool_name, a.args_json, a.prompt, since, goals.get(s.run_id, "")))
            if s.needs_you.startswith("escalation"):
                items.append(WaitingItem(s.run_id, "escalation", s.run_id, "", "", "", s.needs_you.removeprefix("escalation: "), _ms(s.needs_you_since), goals.get(s.run_id, "")))
        return items

    async def mark(self, run_id: str, mark: str, *, undo: bool = False) -> None:
        try:
            await self._open_client().mark_run(run_id, mark, undo=undo)
        except RemoteError as exc:
            if exc.code == "FAILED_PRECONDITION":
                raise MarkRefused(str(exc).removeprefix("FAILED_PRECONDITION: ")) from None
            raise

    def open(self, run_id: str) -> GrpcRunSource:
        ca, cert, key = self._tls
        return GrpcRunSource(self.addr, run_id, token=self._token, tls_ca=ca, tls_client_cert=cert, tls_client_key=key)

    async def start_run(self, agent: str, goal: str = "") -> str:
        """Host a new run in the hub, as ``ctl start`` does; its id."""
        run_id: str = await self._open_client().start_run(agent, goal=goal, plan_json="", speed=1.0)
        return run_id

    async def decide(
        self, item: WaitingItem, approve: bool, reason: str = "", answer: dict[str, str] | None = None, arguments: dict[str, Any] | None = None
    ) -> ControlAck:
        return await self._open_client().send_control(item.run_id, decision(item, approve, reason, answer, arguments))
