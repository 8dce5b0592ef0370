"""RunsService: the gRPC face of a RunHost (Subscribe, SendControl, ListRuns, GetRun)."""

from __future__ import annotations

import uuid
from typing import Any
from collections.abc import AsyncIterator

import grpc

from goldfive import conv
from goldfive.errors import ConversionError
from goldfive.pb.goldfive.v1 import control_pb2, events_pb2, service_pb2, service_pb2_grpc, types_pb2
from goldfive.remote.host import HostedRun, RunHost
from goldfive.run.validate import validate_control
from goldfive.types import TaskStatus

__all__ = ["RunsService", "snapshot", "summary"]

def summary(run: HostedRun) -> service_pb2.RunSummary:
    state = run.state
    # Recorded without a terminal event: the process hosting it went away mid-run.
    recorded = run.channel is None and run.ingest_sinks is None
    label = "INTERRUPTED" if recorded and not state.finished else str(state.phase)
    out = service_pb2.RunSummary(
        run_id=run.run_id,
        state=label,
        tasks_completed=state.count_status(TaskStatus.COMPLETED),
        tasks_total=len(state.tasks),
        goal_summary=state.goal_summary,
        damaged_events=run.damaged,
        history_error=run.history_error,
        write_error=run.write_error,
        unwritten_events=run.unwritten,
        dropped_events=run.dropped,
    )
    if state.started_ms:
        out.started_at.FromMilliseconds(state.started_ms)
    return out


def snapshot(run: HostedRun) -> service_pb2.RunSnapshot:
    state = run.state
    plan = types_pb2.Plan()
    if run.plan is not None:
        plan.CopyFrom(run.plan)
        for task in plan.tasks:  # the plan as emitted, with the statuses as they are now
            view = state.tasks.get(task.id)
            if view is not None:
                task.status = conv.task_status_to_pb(view.status)
    approvals = [
        events_pb2.ApprovalRequested(
            target_id=a.target_id,
            kind=a.kind,
            prompt=a.prompt,
            task_id=a.task_id,
            tool_name=a.tool_name,
            args_json=a.args_json,
            timeout_ms=a.timeout_ms,
        )
        for a in state.approvals.values()
    ]
    return service_pb2.RunSnapshot(
        summary=summary(run),
        plan=plan,
        pending_approvals=approvals,
        paused=state.paused,
        last_sequence=state.last_sequence,
    )


class RunsService(service_pb2_grpc.RunsServicer):
    def __init__(self, host: RunHost, *, ack_timeout: float = 30.0) -> None:
        self.host = host
        self.ack_timeout = ack_timeout

    async def _run(self, run_id: str, context: grpc.aio.ServicerContext[Any, Any]) -> HostedRun:
        try:
            return self.host.resolve(run_id)
        except LookupError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc.args[0]))
            raise  # abort() raises; this keeps the type checker honest

    async def Subscribe(
        self,
        request: service_pb2.SubscribeRequest,
        context: grpc.aio.ServicerContext[service_pb2.SubscribeRequest, events_pb2.Event],
    ) -> AsyncIterator[events_pb2.Event]:
        run = await self._run(request.run_id, context)
        after = max(request.after_sequence, -1)
        await context.send_initial_metadata(())  # tells the client it is subscribed
        stream = run.stream(after)
        try:
            async for ev in stream:
                yield ev
        finally:
            await stream.aclose()  # a client gone mid-stream leaves no subscription behind

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
        if not msg.id:
            msg.id = uuid.uuid4().hex
        problem = validate_control(msg, allow_ladder_kinds=False)  # the run's own limits
        if problem:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        remaining = context.time_remaining()
        timeout = self.ack_timeout if remaining is None else min(self.ack_timeout, remaining)
        try:
            ack = await run.control(msg, timeout)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            raise
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"no ack for control {msg.id} within {timeout:.1f}s"
            )
            raise
        return conv.to_pb_control_ack(ack)

    async def ListRuns(
        self,
        request: service_pb2.ListRunsRequest,
        context: grpc.aio.ServicerContext[service_pb2.ListRunsRequest, service_pb2.ListRunsResponse],
    ) -> service_pb2.ListRunsResponse:
        return service_pb2.ListRunsResponse(runs=[summary(r) for r in self.host.runs()])

    async def GetRun(
        self,
        request: service_pb2.GetRunRequest,
        context: grpc.aio.ServicerContext[service_pb2.GetRunRequest, service_pb2.RunSnapshot],
    ) -> service_pb2.RunSnapshot:
        return snapshot(await self._run(request.run_id, context))
