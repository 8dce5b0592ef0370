"""Who may talk to a goldfive server: the bearer-token interceptor, TLS and the listen check."""

from __future__ import annotations

import hmac
import ipaddress
import os
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

import grpc

from goldfive.errors import ServeConfigError

__all__ = ["TokenInterceptor", "bearer_metadata", "check_listen", "is_loopback", "server_credentials"]

_AUTH_KEY = "authorization"
_SCHEME = "Bearer "
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")


def bearer_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    """The call metadata that carries ``token`` (empty without one)."""
    return ((_AUTH_KEY, _SCHEME + token),) if token else ()


def split_host_port(listen: str) -> tuple[str, str]:
    host, sep, port = listen.rpartition(":")
    if not sep or not port:
        raise ServeConfigError(f"listen address {listen!r} must be HOST:PORT, e.g. 127.0.0.1:7531")
    return host.strip("[]"), port


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name could resolve anywhere: treat it as exposed


def check_listen(listen: str, *, token: str | None, tls: bool) -> None:
    """Refuse to expose a server beyond loopback with neither a token nor TLS."""
    host, _ = split_host_port(listen)
    if not is_loopback(host) and not token and not tls:
        raise ServeConfigError(
            f"refusing to listen on {listen}: it is not a loopback address and neither a token "
            "(--token or GOLDFIVE_TOKEN) nor TLS (--tls-cert/--tls-key) is configured"
        )


def server_credentials(
    tls_cert: str | os.PathLike[str] | None, tls_key: str | os.PathLike[str] | None
) -> grpc.ServerCredentials | None:
    if tls_cert is None and tls_key is None:
        return None
    if tls_cert is None or tls_key is None:
        raise ServeConfigError("TLS needs both --tls-cert and --tls-key")
    try:
        cert, key = Path(tls_cert).read_bytes(), Path(tls_key).read_bytes()
    except OSError as exc:
        raise ServeConfigError(f"cannot read TLS certificate or key: {exc}") from exc
    # grpc only fails later, at bind time, with a generic error (and C-core log lines).
    if b"-----BEGIN CERTIFICATE-----" not in cert:
        raise ServeConfigError(f"--tls-cert {os.fspath(tls_cert)!r} is not a PEM certificate")
    if b"-----BEGIN" not in key or b"PRIVATE KEY-----" not in key:
        raise ServeConfigError(f"--tls-key {os.fspath(tls_key)!r} is not a PEM private key")
    return grpc.ssl_server_credentials([(key, cert)])


def _denied(handler: grpc.RpcMethodHandler[_Req, _Resp], reason: str) -> grpc.RpcMethodHandler[_Req, _Resp]:
    """A handler of the same shape as ``handler`` that only aborts with UNAUTHENTICATED."""

    async def deny(_request: Any, context: grpc.aio.ServicerContext[_Req, _Resp]) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, reason)

    de, ser = handler.request_deserializer, handler.response_serializer
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(deny, request_deserializer=de, response_serializer=ser)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(deny, request_deserializer=de, response_serializer=ser)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(deny, request_deserializer=de, response_serializer=ser)
    return grpc.stream_stream_rpc_method_handler(deny, request_deserializer=de, response_serializer=ser)


class TokenInterceptor(grpc.aio.ServerInterceptor):
    """Every RPC must carry ``authorization: Bearer <token>``; compared in constant time."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ServeConfigError("an empty token would let anyone in; pass None for no token")
        self._expected = (_SCHEME + token).encode()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[_Req, _Resp] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[_Req, _Resp] | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        given = b""
        for key, value in handler_call_details.invocation_metadata or ():
            if key == _AUTH_KEY:
                given = value.encode() if isinstance(value, str) else bytes(value)
                break
        if not given:
            return _denied(handler, "missing token: send metadata 'authorization: Bearer <token>'")
        if not hmac.compare_digest(given, self._expected):
            return _denied(handler, "wrong token")
        return handler
