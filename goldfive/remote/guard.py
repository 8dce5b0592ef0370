"""Requests whose bytes do not parse get INVALID_ARGUMENT with the reason, in words.

grpc's generated handlers decode a request before any servicer code runs; a decode error there
becomes UNKNOWN naming a Python class. This interceptor wraps each handler's deserializer so
that bytes which are not the expected message reach the handler as a marker, and the handler
refuses them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")

__all__ = ["ParseGuard"]


class _Unparseable:
    def __init__(self, why: str) -> None:
        self.why = why


def _safe(deserialize: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def read(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception as exc:  # isolation boundary: bytes from the network
            return _Unparseable(" ".join(str(exc).split())[:200] or type(exc).__name__)

    return read


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], bad: _Unparseable) -> None:
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request could not be read: {bad.why}")


def _unary(behavior: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if isinstance(request, _Unparseable):
            await _refuse(context, request)
        return await behavior(request, context)

    return guarded


def _unary_stream(behavior: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
    async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        if isinstance(request, _Unparseable):
            await _refuse(context, request)
        async for item in behavior(request, context):
            yield item

    return guarded


def _checked(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
    async def each() -> AsyncIterator[Any]:
        async for request in requests:
            if isinstance(request, _Unparseable):
                await _refuse(context, request)
            yield request

    return each()


def _stream_unary(behavior: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def guarded(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await behavior(_checked(requests, context), context)

    return guarded


def _stream_stream(behavior: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
    async def guarded(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        async for item in behavior(_checked(requests, context), context):
            yield item

    return guarded


class ParseGuard(grpc.aio.ServerInterceptor):
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[_Req, _Resp] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[_Req, _Resp] | None:
        handler: Any = await continuation(handler_call_details)
        if handler is None or handler.request_deserializer is None:
            return handler  # type: ignore[no-any-return]
        changes: dict[str, Any] = {"request_deserializer": _safe(handler.request_deserializer)}
        if handler.unary_unary is not None:
            changes["unary_unary"] = _unary(handler.unary_unary)
        elif handler.unary_stream is not None:
            changes["unary_stream"] = _unary_stream(handler.unary_stream)
        elif handler.stream_unary is not None:
            changes["stream_unary"] = _stream_unary(handler.stream_unary)
        elif handler.stream_stream is not None:
            changes["stream_stream"] = _stream_stream(handler.stream_stream)
        return handler._replace(**changes)  # type: ignore[no-any-return]
