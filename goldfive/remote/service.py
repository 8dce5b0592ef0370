"""RunsService: the gRPC face of a RunHost (Subscribe, SendControl, ListRuns, GetRun).

A refusal the service means (unknown run, invalid control, no ack in time) has its own status;
any other failure is a bug on this side: the client gets INTERNAL and a sentence saying what
was being done, and the traceback goes to the ``goldfive.remote`` log.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from goldfive import conv
from goldfive.errors import ConversionError
from goldfive.pb.goldfive.v1 import control_pb2, events_pb2, service_pb2, service_pb2_grpc, types_pb2
from goldfive.remote.host import HostedRun, RunHost
from goldfive.run.validate import validate_control
from goldfive.types import TaskStatus

__all__ = ["RunsService", "snapshot", "summary"]

log = logging.getLogger("goldfive.remote")
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")
_Ctx = grpc.aio.ServicerContext[Any, Any]
_Unary = Callable[[Any, _Req, _Ctx], Awaitable[_Resp]]
_Stream = Callable[[Any, _Req, _Ctx], AsyncGenerator[_Resp, None]]


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


async def _internal(context: _Ctx, doing: str) -> None:
    """Log the exception being handled and end the call with INTERNAL, said in words."""
    log.exception("unexpected failure while %s", doing)
    await context.abort(grpc.StatusCode.INTERNAL, f"the server failed while {doing}; its log has the details")


def _unary(doing: Callable[[Any], str]) -> Callable[[_Unary[_Req, _Resp]], _Unary[_Req, _Resp]]:
    """Turn an unexpected exception of a unary call into INTERNAL; ``doing(request)`` says what
    the call was doing. Statuses set with ``context.abort`` pass through."""

    def wrap(method: _Unary[_Req, _Resp]) -> _Unary[_Req, _Resp]:
        @functools.wraps(method)
        async def guarded(self: Any, request: _Req, context: _Ctx) -> _Resp:
            try:
                return await method(self, request, context)
            except grpc.aio.AbortError:
                raise
            except Exception:  # isolation boundary: a bug here must not leak Python names to the client
                await _internal(context, doing(request))
                raise  # unreachable: abort raises

        return guarded

    return wrap


def _stream(doing: Callable[[Any], str]) -> Callable[[_Stream[_Req, _Resp]], _Stream[_Req, _Resp]]:
    """:func:`_unary` for a server-streaming call."""

    def wrap(method: _Stream[_Req, _Resp]) -> _Stream[_Req, _Resp]:
        @functools.wraps(method)
        async def guarded(self: Any, request: _Req, context: _Ctx) -> AsyncGenerator[_Resp, None]:
            inner = method(self, request, context)
            try:
                async for item in inner:
                    yield item
            except grpc.aio.AbortError:
                raise
            except Exception:  # isolation boundary, as in _unary
                await _internal(context, doing(request))
            finally:
                await inner.aclose()

        return guarded

    return wrap


def _run_name(request: Any) -> str:
    """``run 'ID'``, the id cut short: it is the client's text, echoed in a status."""
    rid = str(request.run_id)
    return f"run {rid if len(rid) <= 64 else rid[:63] + '…'!r}"


def _control_phrase(control: control_pb2.ControlEvent) -> str:
    """'a PAUSE control', 'an APPROVE control', or 'a control' when the kind has no name."""
    kinds = control_pb2.ControlKind
    name = kinds.Name(control.kind).removeprefix("CONTROL_KIND_") if control.kind in kinds.values() else ""
    if not name or name == "UNSPECIFIED":
        return "a control"
    return f"{'an' if name[0] in 'AEIOU' else 'a'} {name} control"


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

    @_stream(lambda request: f"streaming the events of {_run_name(request)}")
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

    @_unary(lambda request: f"sending {_control_phrase(request.control)} to {_run_name(request)}")
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
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"sent, not yet acked: control {msg.id} had no ack within {timeout:.1f}s; it stays queued for the run",
            )
            raise
        return conv.to_pb_control_ack(ack)

    @_unary(lambda request: "listing the runs")
    async def ListRuns(
        self,
        request: service_pb2.ListRunsRequest,
        context: grpc.aio.ServicerContext[service_pb2.ListRunsRequest, service_pb2.ListRunsResponse],
    ) -> service_pb2.ListRunsResponse:
        return service_pb2.ListRunsResponse(runs=[summary(r) for r in self.host.runs()])

    @_unary(lambda request: f"reading {_run_name(request)}")
    async def GetRun(
        self,
        request: service_pb2.GetRunRequest,
        context: grpc.aio.ServicerContext[service_pb2.GetRunRequest, service_pb2.RunSnapshot],
    ) -> service_pb2.RunSnapshot:
        return snapshot(await self._run(request.run_id, context))
