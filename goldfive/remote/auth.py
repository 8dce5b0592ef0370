"""Who may talk to a goldfive server: the bearer-token interceptor, TLS and the listen check.

TLS alone encrypts but does not say who the client is, so a server reachable beyond loopback
needs a way to authenticate its clients: a bearer token of at least :data:`MIN_TOKEN_CHARS`
characters, or client certificates signed by a CA it was given (``--tls-client-ca``).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

import grpc

from goldfive.errors import ServeConfigError

__all__ = [
    "MIN_TOKEN_CHARS",
    "TokenInterceptor",
    "bearer_metadata",
    "check_listen",
    "is_loopback",
    "server_credentials",
]

#: Shortest bearer token a server beyond loopback accepts.
MIN_TOKEN_CHARS = 16

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


def check_listen(listen: str, *, token: str | None, client_certs: bool) -> None:
    """Refuse to expose a server beyond loopback unless its clients must authenticate: with a
    token of at least MIN_TOKEN_CHARS characters, or with client certificates."""
    host, _ = split_host_port(listen)
    if is_loopback(host) or client_certs:
        return
    if not token:
        raise ServeConfigError(
            f"refusing to listen on {listen}: it is not a loopback address, so clients must "
            f"authenticate; give a token of {MIN_TOKEN_CHARS}+ characters (--token or GOLDFIVE_TOKEN) "
            "or require client certificates (--tls-client-ca with --tls-cert/--tls-key)"
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise ServeConfigError(
            f"refusing to listen on {listen}: the token has {len(token)} characters; "
            f"a non-loopback address needs at least {MIN_TOKEN_CHARS}"
        )


def _read_pem(path: str | os.PathLike[str], flag: str, marker: bytes, what: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ServeConfigError(f"cannot read {flag} {os.fspath(path)!r}: {exc.strerror or exc}") from exc
    # grpc only fails later, at bind time, with a generic error (and C-core log lines).
    if marker not in data:
        raise ServeConfigError(f"{flag} {os.fspath(path)!r} is not a PEM {what}")
    return data


def server_credentials(
    tls_cert: str | os.PathLike[str] | None,
    tls_key: str | os.PathLike[str] | None,
    tls_client_ca: str | os.PathLike[str] | None = None,
) -> grpc.ServerCredentials | None:
    """TLS credentials from PEM files, or None without them. With ``tls_client_ca`` every
    client must present a certificate that CA signed."""
    if tls_cert is None and tls_key is None:
        if tls_client_ca is not None:
            raise ServeConfigError("--tls-client-ca needs TLS: give --tls-cert and --tls-key too")
        return None
    if tls_cert is None or tls_key is None:
        raise ServeConfigError("TLS needs both --tls-cert and --tls-key")
    cert = _read_pem(tls_cert, "--tls-cert", b"-----BEGIN CERTIFICATE-----", "certificate")
    key = _read_pem(tls_key, "--tls-key", b"PRIVATE KEY-----", "private key")
    if b"-----BEGIN" not in key:
        raise ServeConfigError(f"--tls-key {os.fspath(tls_key)!r} is not a PEM private key")
    if tls_client_ca is None:
        return grpc.ssl_server_credentials([(key, cert)])
    ca = _read_pem(tls_client_ca, "--tls-client-ca", b"-----BEGIN CERTIFICATE-----", "certificate")
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=True)


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
