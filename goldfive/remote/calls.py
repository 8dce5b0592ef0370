"""How the Runs service's calls fail: a refusal the service means has its own status (set with
``context.abort``); any other exception is a bug on this side, so the client gets INTERNAL and a
sentence saying what was being done, and the traceback goes to the ``goldfive.remote`` log.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from goldfive.pb.goldfive.v1 import control_pb2

__all__ = ["Ctx", "control_phrase", "run_name", "stream_call", "unary_call"]

log = logging.getLogger("goldfive.remote")
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")
Ctx = grpc.aio.ServicerContext[Any, Any]
_Unary = Callable[[Any, _Req, Ctx], Awaitable[_Resp]]
_Stream = Callable[[Any, _Req, Ctx], AsyncGenerator[_Resp, None]]


async def _internal(context: Ctx, doing: str) -> None:
    """Log the exception being handled and end the call with INTERNAL, said in words."""
    log.exception("unexpected failure while %s", doing)
    await context.abort(grpc.StatusCode.INTERNAL, f"the server failed while {doing}; its log has the details")


def unary_call(doing: Callable[[Any], str]) -> Callable[[_Unary[_Req, _Resp]], _Unary[_Req, _Resp]]:
    """Turn an unexpected exception of a unary call into INTERNAL; ``doing(request)`` says what
    the call was doing. Statuses set with ``context.abort`` pass through."""

    def wrap(method: _Unary[_Req, _Resp]) -> _Unary[_Req, _Resp]:
        @functools.wraps(method)
        async def guarded(self: Any, request: _Req, context: Ctx) -> _Resp:
            try:
                return await method(self, request, context)
            except grpc.aio.AbortError:
                raise
            except Exception:  # isolation boundary: a bug here must not leak Python names to the client
                await _internal(context, doing(request))
                raise  # unreachable: abort raises

        return guarded

    return wrap


def stream_call(doing: Callable[[Any], str]) -> Callable[[_Stream[_Req, _Resp]], _Stream[_Req, _Resp]]:
    """:func:`unary_call` for a server-streaming call."""

    def wrap(method: _Stream[_Req, _Resp]) -> _Stream[_Req, _Resp]:
        @functools.wraps(method)
        async def guarded(self: Any, request: _Req, context: Ctx) -> AsyncGenerator[_Resp, None]:
            inner = method(self, request, context)
            try:
                async for item in inner:
                    yield item
            except grpc.aio.AbortError:
                raise
            except Exception:  # isolation boundary, as in unary_call
                await _internal(context, doing(request))
            finally:
                await inner.aclose()

        return guarded

    return wrap


def run_name(request: Any) -> str:
    """``run 'ID'``, the id cut short: it is the client's text, echoed in a status."""
    rid = str(request.run_id)
    return f"run {rid if len(rid) <= 64 else rid[:63] + '…'!r}"


def control_phrase(control: control_pb2.ControlEvent) -> str:
    """'a PAUSE control', 'an APPROVE control', or 'a control' when the kind has no name."""
    kinds = control_pb2.ControlKind
    name = kinds.Name(control.kind).removeprefix("CONTROL_KIND_") if control.kind in kinds.values() else ""
    if not name or name == "UNSPECIFIED":
        return "a control"
    return f"{'an' if name[0] in 'AEIOU' else 'a'} {name} control"
