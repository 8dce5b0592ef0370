"""The shape of a grpc.aio method handler, as the server's interceptors rewrite it.

grpc's stubs type ``RpcMethodHandler`` for the synchronous server (a behaviour returns a value
or an Iterator); under grpc.aio the same named tuple holds coroutine functions and async
generators. :class:`AioHandler` says so once, and :func:`aio` is the one place a handler from
grpc is taken as one, so the interceptors (:mod:`goldfive.remote.auth`, :mod:`goldfive.remote.guard`)
are typed from there on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol, TypeVar, cast

import grpc

__all__ = ["AioHandler", "Context", "aio", "for_grpc"]

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")

#: What a behaviour is given beside its request(s).
Context = grpc.aio.ServicerContext


class AioHandler(Protocol[_Req, _Resp]):
    """One RPC's handler on a grpc.aio server: its (de)serializers and the one behaviour its
    shape has (the others None)."""

    @property
    def request_deserializer(self) -> Callable[[bytes], _Req] | None: ...
    @property
    def response_serializer(self) -> Callable[[_Resp], bytes] | None: ...
    @property
    def unary_unary(self) -> Callable[[_Req, Context[_Req, _Resp]], Awaitable[_Resp]] | None: ...
    @property
    def unary_stream(self) -> Callable[[_Req, Context[_Req, _Resp]], AsyncIterator[_Resp]] | None: ...
    @property
    def stream_unary(self) -> Callable[[AsyncIterator[_Req], Context[_Req, _Resp]], Awaitable[_Resp]] | None: ...
    @property
    def stream_stream(self) -> Callable[[AsyncIterator[_Req], Context[_Req, _Resp]], AsyncIterator[_Resp]] | None: ...

    def _replace(self, **changes: object) -> AioHandler[_Req, _Resp]:
        """A copy with ``changes`` (it is a named tuple)."""
        ...


def aio(handler: grpc.RpcMethodHandler[_Req, _Resp]) -> AioHandler[_Req, _Resp]:
    """``handler`` as what a grpc.aio server holds (the stubs describe the synchronous one)."""
    return cast("AioHandler[_Req, _Resp]", handler)


def for_grpc(handler: AioHandler[_Req, _Resp]) -> grpc.RpcMethodHandler[_Req, _Resp]:
    """``handler`` handed back to grpc, which takes it as its stubs describe."""
    return cast("grpc.RpcMethodHandler[_Req, _Resp]", handler)
