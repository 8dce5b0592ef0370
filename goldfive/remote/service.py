"""RunsService: the gRPC face of a RunHost, the hub's ``Runs`` service.

Subscribe / SubscribeBatches stream a run's events (history, then live); SendControl delivers
a control and answers the run's own ack; ListRuns, GetRun and ListWaiting say what every run is
doing and what waits for a person; StartRun hosts a new run in this process; MarkRun keeps a
person's mark on a run (acknowledged, archived) in the hub's registry. How a call fails
is in :mod:`goldfive.remote.calls`; what a run's summary says, in :mod:`goldfive.remote.summaries`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Protocol, TypeVar

import grpc

from goldfive import conv
from goldfive.approvals.approvers import Approvers
from goldfive.control import ControlMessage
from goldfive.errors import ConversionError, GoldfiveError
from goldfive.pb.goldfive.v1 import control_pb2, events_pb2, service_pb2, service_pb2_grpc
from goldfive.remote.auth import caller
from goldfive.remote.batching import run_batches
from goldfive.remote.calls import control_phrase, run_name, stream_call, unary_call
from goldfive.remote.host import RunHost
from goldfive.remote.summaries import snapshot, summary, waiting_items
from goldfive.run.validate import validate_control
from goldfive.store.registry import ARCHIVED, MARKS, Marks
from goldfive.view.attention import mark_refusal

if TYPE_CHECKING:
    from goldfive.hub.connected import RunnerAttachment
    from goldfive.hub.service import HubService
    from goldfive.remote.served import ServedRun
    from goldfive.store.registry import LaunchSpec

__all__ = ["Placer", "RunsService", "snapshot", "summary"]

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")


def _stamp_author(msg: ControlMessage, name: str) -> None:
    """Record who sent the control: the name of the caller's token. An author the client
    claimed is kept beside it, never in its place."""
    if not name:
        return
    claimed = str(msg.payload.get("author", "") or "")
    msg.payload["author"] = name if not claimed or claimed == name else f"{name} (as {claimed})"


class Placer(Protocol):
    """Places runs outside the hub's process (``serve --ray``: goldfive.placement.RayPlacer).
    The server binds it before serving, StartRun places through it, ``serve`` resumes the runs
    it placed before a restart and closes it when serving ends; a fleet's takeover places a
    gone hub's run again. Every method the server, the Runs service and the fleet call is here
    (tests/test_protocols_declare_what_is_called.py reads the source for them)."""

    def bind(self, host: RunHost, hub: HubService, address: str) -> None:
        """The hub's run table, its Hub service (whose recorder records the placed runs) and
        the address the server is bound to: called once, before the server starts."""
        ...

    async def place(self, request: service_pb2.StartRunRequest, started_by: str = "") -> str:
        """Place a started run: returns the run id it chose, the run already served by the
        host; GoldfiveError (one line) for a bad request."""
        ...

    async def place_again(self, run: RunnerAttachment, launch: LaunchSpec) -> None:
        """Place ``run`` (its state already held) again from the launch the hubs recorded when
        it was first placed: its hub is gone (a fleet's takeover)."""
        ...

    async def resume_recorded(self) -> list[str]:
        """Take back, or place again, the unfinished runs this hub placed before it stopped;
        returns the runs placed again."""
        ...

    async def close(self) -> None:
        """End what it placed that goes on (the runs stay interrupted) and leave the cluster."""
        ...


class RunsService(service_pb2_grpc.RunsServicer):
    def __init__(
        self, host: RunHost, *, ack_timeout: float = 30.0, placer: Placer | None = None, approvers: Approvers | None = None
    ) -> None:
        self.host = host
        self.ack_timeout = ack_timeout
        #: Where StartRun's runs go instead of this process, if anywhere.
        self.placer = placer
        #: Who may decide which approvals (serve --approvers); everyone else: PERMISSION_DENIED.
        self.approvers = approvers or Approvers()

    async def _run(self, run_id: str, context: grpc.aio.ServicerContext[_Req, _Resp]) -> ServedRun:
        try:
            return self.host.resolve(run_id)
        except LookupError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc.args[0]))
            raise  # abort() raises; this keeps the type checker honest

    @stream_call(lambda request: f"streaming the events of {run_name(request)}")
    async def Subscribe(
        self,
        request: service_pb2.SubscribeRequest,
        context: grpc.aio.ServicerContext[service_pb2.SubscribeRequest, events_pb2.Event],
    ) -> AsyncGenerator[events_pb2.Event, None]:
        run = await self._run(request.run_id, context)
        after = max(request.after_sequence, -1)
        await context.send_initial_metadata(())  # tells the client it is subscribed
        stream = run.stream(after)
        try:
            async for ev in stream:
                yield ev
        finally:
            await stream.aclose()  # a client gone mid-stream leaves no subscription behind

    @unary_call(lambda request: f"sending {control_phrase(request.control)} to {run_name(request)}")
    async def SendControl(
        self,
        request: service_pb2.SendControlRequest,
        context: grpc.aio.ServicerContext[service_pb2.SendControlRequest, control_pb2.ControlAck],
    ) -> control_pb2.ControlAck:
        run = await self._run(request.run_id, context)
        if not request.HasField("control"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no control in the request")
        try:
            msg = conv.from_pb_control_event(request.control)
        except ConversionError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed control: {exc}")
            raise  # unreachable: abort raises
        except RecursionError:  # json.loads of an extra_json like '[' * 100000
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "malformed control: extra_json is nested too deeply")
            raise
        if not msg.id:
            msg.id = uuid.uuid4().hex
        _stamp_author(msg, caller(context))
        problem = validate_control(msg, allow_ladder_kinds=False)  # the run's own limits
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        # Only a hub with --approvers reads the run's pending approvals here (the run's view is
        # not needed to route anything else).
        refusal = self.approvers.control_refusal(msg, run.state.approvals, caller(context)) if self.approvers.rules else ""
        if refusal:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, refusal)
        remaining = context.time_remaining()
        timeout = self.ack_timeout if remaining is None else min(self.ack_timeout, remaining)
        try:
            ack = await run.control(msg, timeout)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"sent, not yet acked: control {msg.id} had no ack within {timeout:.1f}s; it stays queued for the run",
            )
            raise
        return conv.to_pb_control_ack(ack)

    @unary_call(lambda request: "listing the runs")
    async def ListRuns(
        self,
        request: service_pb2.ListRunsRequest,
        context: grpc.aio.ServicerContext[service_pb2.ListRunsRequest, service_pb2.ListRunsResponse],
    ) -> service_pb2.ListRunsResponse:
        marks, problem = await self._marks()
        runs = [
            summary(r, marks.get(r.run_id))
            for r in self.host.runs()
            if request.include_archived or ARCHIVED not in marks.get(r.run_id, {})
        ]
        warning = " · ".join(w for w in (self.host.warning(), problem) if w)
        return service_pb2.ListRunsResponse(runs=runs, hub_warning=warning)

    async def _marks(self) -> tuple[Marks, str]:
        """Every run's marks, and why they could not be read ("" when they could)."""
        try:
            return await self.host.registry.marks(), ""
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: the runs are listed without their marks
            return {}, f"the runs' marks cannot be read: {' '.join(str(exc).split())}"

    @unary_call(lambda request: f"reading {run_name(request)}")
    async def GetRun(
        self,
        request: service_pb2.GetRunRequest,
        context: grpc.aio.ServicerContext[service_pb2.GetRunRequest, service_pb2.RunSnapshot],
    ) -> service_pb2.RunSnapshot:
        run = await self._run(request.run_id, context)
        marks, problem = await self._marks()
        snap = snapshot(run, marks.get(run.run_id))
        snap.hub_warning = " · ".join(w for w in (self.host.warning(), problem) if w)
        return snap

    @unary_call(lambda request: f"marking {run_name(request)}")
    async def MarkRun(
        self,
        request: service_pb2.MarkRunRequest,
        context: grpc.aio.ServicerContext[service_pb2.MarkRunRequest, service_pb2.RunSummary],
    ) -> service_pb2.RunSummary:
        if request.mark not in MARKS:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown mark: {' or '.join(MARKS)}")
        run = await self._run(request.run_id, context)
        if problem := mark_refusal(run.state, request.mark, undo=request.undo, interrupted=run.interrupted):
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, problem)
        registry = self.host.registry
        if request.undo:
            await registry.unmark(run.run_id, request.mark)
        else:
            await registry.mark(run.run_id, request.mark, caller(context) or "operator")
        marks, _ = await self._marks()
        return summary(run, marks.get(run.run_id))

    @unary_call(lambda request: "listing what waits for a person")
    async def ListWaiting(
        self,
        request: service_pb2.ListWaitingRequest,
        context: grpc.aio.ServicerContext[service_pb2.ListWaitingRequest, service_pb2.ListWaitingResponse],
    ) -> service_pb2.ListWaitingResponse:
        runs = [await self._run(request.run_id, context)] if request.run_id else self.host.runs()
        items = [item for run in runs for item in waiting_items(run)]
        items.sort(key=lambda i: (i.since.ToMilliseconds() if i.HasField("since") else 0, i.run_id, i.target_id))
        return service_pb2.ListWaitingResponse(items=items)

    @unary_call(lambda request: "starting a run")
    async def StartRun(
        self,
        request: service_pb2.StartRunRequest,
        context: grpc.aio.ServicerContext[service_pb2.StartRunRequest, service_pb2.StartRunResponse],
    ) -> service_pb2.StartRunResponse:
        from goldfive.remote.launch import start_spec

        try:
            if self.placer is not None:
                return service_pb2.StartRunResponse(run_id=await self.placer.place(request, caller(context) or "operator"))
            # In a thread: importing the person's module (and whatever it imports) can take
            # seconds, and the hub must keep answering every other run meanwhile.
            who = caller(context) or "operator"
            launch = await asyncio.to_thread(
                start_spec, request.agent, request.goal, request.plan_json, request.speed, budget=request.budget, budget_author=who
            )
            run = await self.host.host(launch, started_by=who)
        except GoldfiveError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, " ".join(str(exc).split()))
            raise  # unreachable: abort raises
        return service_pb2.StartRunResponse(run_id=run.run_id)

    @stream_call(lambda request: f"streaming the events of {run_name(request)} in batches")
    async def SubscribeBatches(
        self,
        request: service_pb2.SubscribeRequest,
        context: grpc.aio.ServicerContext[service_pb2.SubscribeRequest, service_pb2.EventBatch],
    ) -> AsyncGenerator[service_pb2.EventBatch, None]:
        run = await self._run(request.run_id, context)
        await context.send_initial_metadata(())  # tells the client it is subscribed
        batches = run_batches(run, max(request.after_sequence, -1))
        try:
            async for batch in batches:
                yield batch
        finally:
            await batches.aclose()  # a client gone mid-stream leaves no subscription behind
