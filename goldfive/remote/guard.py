"""Requests whose bytes do not parse get INVALID_ARGUMENT with the reason, in words.

grpc's generated handlers decode a request before any servicer code runs; a decode error there
becomes UNKNOWN naming a Python class. This interceptor wraps each handler's deserializer so
that bytes which are not the expected message reach the handler as a marker, and the handler
refuses them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import NoReturn, TypeVar

import grpc

from goldfive.remote.aio_handler import Context, aio, for_grpc

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")

__all__ = ["ParseGuard"]


class _Unparseable:
    def __init__(self, why: str) -> None:
        self.why = why


def _safe(deserialize: Callable[[bytes], _Req]) -> Callable[[bytes], _Req | _Unparseable]:
    def read(data: bytes) -> _Req | _Unparseable:
        try:
            return deserialize(data)
        except Exception as exc:  # isolation boundary: bytes from the network
            return _Unparseable(" ".join(str(exc).split())[:200] or type(exc).__name__)

    return read


async def _refuse(context: Context[_Req, _Resp], bad: _Unparseable) -> NoReturn:
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request could not be read: {bad.why}")


def _unary(
    behavior: Callable[[_Req, Context[_Req, _Resp]], Awaitable[_Resp]],
) -> Callable[[_Req | _Unparseable, Context[_Req, _Resp]], Awaitable[_Resp]]:
    async def guarded(request: _Req | _Unparseable, context: Context[_Req, _Resp]) -> _Resp:
        if isinstance(request, _Unparseable):
            await _refuse(context, request)
        return await behavior(request, context)

    return guarded


def _unary_stream(
    behavior: Callable[[_Req, Context[_Req, _Resp]], AsyncIterator[_Resp]],
) -> Callable[[_Req | _Unparseable, Context[_Req, _Resp]], AsyncIterator[_Resp]]:
    async def guarded(request: _Req | _Unparseable, context: Context[_Req, _Resp]) -> AsyncIterator[_Resp]:
        if isinstance(request, _Unparseable):
            await _refuse(context, request)
        async for item in behavior(request, context):
            yield item

    return guarded


def _checked(requests: AsyncIterator[_Req | _Unparseable], context: Context[_Req, _Resp]) -> AsyncIterator[_Req]:
    async def each() -> AsyncIterator[_Req]:
        async for request in requests:
            if isinstance(request, _Unparseable):
                await _refuse(context, request)
            yield request

    return each()


def _stream_unary(
    behavior: Callable[[AsyncIterator[_Req], Context[_Req, _Resp]], Awaitable[_Resp]],
) -> Callable[[AsyncIterator[_Req | _Unparseable], Context[_Req, _Resp]], Awaitable[_Resp]]:
    async def guarded(requests: AsyncIterator[_Req | _Unparseable], context: Context[_Req, _Resp]) -> _Resp:
        return await behavior(_checked(requests, context), context)

    return guarded


def _stream_stream(
    behavior: Callable[[AsyncIterator[_Req], Context[_Req, _Resp]], AsyncIterator[_Resp]],
) -> Callable[[AsyncIterator[_Req | _Unparseable], Context[_Req, _Resp]], AsyncIterator[_Resp]]:
    async def guarded(requests: AsyncIterator[_Req | _Unparseable], context: Context[_Req, _Resp]) -> AsyncIterator[_Resp]:
        async for item in behavior(_checked(requests, context), context):
            yield item

    return guarded


class ParseGuard(grpc.aio.ServerInterceptor):
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[_Req, _Resp] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[_Req, _Resp] | None:
        found = await continuation(handler_call_details)
        if found is None:
            return None
        handler = aio(found)
        if handler.request_deserializer is None:
            return found
        changes: dict[str, object] = {"request_deserializer": _safe(handler.request_deserializer)}
        if handler.unary_unary is not None:
            changes["unary_unary"] = _unary(handler.unary_unary)
        elif handler.unary_stream is not None:
            changes["unary_stream"] = _unary_stream(handler.unary_stream)
        elif handler.stream_unary is not None:
            changes["stream_unary"] = _stream_unary(handler.stream_unary)
        elif handler.stream_stream is not None:
            changes["stream_stream"] = _stream_stream(handler.stream_stream)
        return for_grpc(handler._replace(**changes))
