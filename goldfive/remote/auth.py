"""Who may talk to a goldfive server: the bearer-token interceptor, TLS and the listen check.

TLS alone encrypts but does not say who the client is, so a server reachable beyond loopback
needs a way to authenticate its clients: a bearer token of at least :data:`MIN_TOKEN_CHARS`
characters, or client certificates signed by a CA it was given (``--tls-client-ca``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hmac
import ipaddress
import os
import re
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

import grpc

from goldfive.errors import ServeConfigError
from goldfive.link.wire import AUTH_KEY, SCHEME, bearer_metadata
from goldfive.remote.aio_handler import Context, aio, for_grpc
from goldfive.remote.throttle import FailedAuthThrottle, peer_address

__all__ = [
    "MIN_TOKEN_CHARS",
    "OPERATOR",
    "RUNNER",
    "RUNNER_METHODS",
    "Credential",
    "TokenInterceptor",
    "bearer_metadata",
    "caller",
    "caller_role",
    "check_listen",
    "credentials",
    "is_loopback",
    "server_credentials",
]

#: Shortest bearer token a server beyond loopback accepts.
MIN_TOKEN_CHARS = 16

_AUTH_KEY = AUTH_KEY
_SCHEME = SCHEME
_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")
#: What a wrapped behaviour takes first: one request, or the stream of them.
_In = TypeVar("_In")


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


def check_listen(listen: str, *, token: str | None, client_certs: bool, others: Sequence[Credential] = ()) -> None:
    """Refuse to expose a server beyond loopback unless its clients must authenticate: with a
    token of at least MIN_TOKEN_CHARS characters, or with client certificates. Every token in
    ``others`` (more operator tokens, runner tokens) is held to the same length."""
    host, _ = split_host_port(listen)
    if is_loopback(host):
        return
    for cred in others:
        if len(cred.secret) < MIN_TOKEN_CHARS:
            which = ("" if cred.role == OPERATOR else f"{cred.role} ") + "token" + ("" if cred.name == cred.role else f" {cred.name!r}")
            raise ServeConfigError(
                f"refusing to listen on {listen}: the {which} has {len(cred.secret)} characters; "
                f"a non-loopback address needs at least {MIN_TOKEN_CHARS}"
            )
    if client_certs:
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


# -- roles ------------------------------------------------------------------------------

#: May list, watch and control every run (and connect runs).
OPERATOR = "operator"
#: May only connect and publish its own run.
RUNNER = "runner"
#: The methods a runner token may call: connecting a run, and goldfive v1's push of events.
RUNNER_METHODS = frozenset(
    {
        "/goldfive.v1.Hub/Connect",
        "/goldfive.v1.Hub/ConnectShared",
        "/goldfive.v1.Hub/ShareAcks",
        "/goldfive.v1.Hub/Hook",
        "/goldfive.v1.GoldfiveIngress/StreamEvents",
    }
)

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.@-]{0,63}")
_CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("goldfive_caller", default="")
#: The role of the current call's token; a server without tokens trusts every caller as an
#: operator (it listens on loopback only, see check_listen).
_ROLE: contextvars.ContextVar[str] = contextvars.ContextVar("goldfive_caller_role", default=OPERATOR)


@dataclass(frozen=True)
class Credential:
    name: str
    role: str
    secret: str = ""

    def __repr__(self) -> str:  # never the secret, in a log or a traceback
        return f"Credential({self.name!r}, {self.role!r})"


def _credential(text: str, role: str) -> Credential:
    """``NAME=SECRET`` or a bare ``SECRET`` (named after its role). A secret that holds ``=``
    past its start (base64 padding aside) must be given with a name."""
    name, sep, secret = text.partition("=")
    if sep and _NAME.fullmatch(name) and secret.strip("="):
        return Credential(name, role, secret)
    return Credential(role, role, text)


def credentials(operator: str | Iterable[str] | None, runner: str | Iterable[str] | None = None) -> list[Credential]:
    """The server's tokens, each ``NAME=SECRET`` or a bare ``SECRET`` (named "operator" or
    "runner"). ServeConfigError for an empty token, a name or secret given twice, or runner
    tokens without an operator token (nobody could watch or control the runs)."""

    def texts(given: str | Iterable[str] | None) -> list[str]:
        return [t for t in ([given] if isinstance(given, str) else list(given or ())) if t]  # "" = none, as before

    out = [_credential(t, OPERATOR) for t in texts(operator)] + [_credential(t, RUNNER) for t in texts(runner)]
    names: set[str] = set()
    secrets: set[str] = set()
    for cred in out:
        if not cred.secret:
            raise ServeConfigError(f"the {cred.role} token {cred.name!r} is empty: an empty token would let anyone in")
        if cred.name in names:
            raise ServeConfigError(f"two tokens are named {cred.name!r}: give each NAME=SECRET a different name")
        if cred.secret in secrets:
            raise ServeConfigError(f"token {cred.name!r} has the same secret as another token: each must differ")
        names.add(cred.name)
        secrets.add(cred.secret)
    if out and not any(c.role == OPERATOR for c in out):
        raise ServeConfigError("--runner-token needs --token too: without an operator token nobody could watch or control the runs")
    return out


def caller(context: object = None) -> str:
    """The name of the token the current call was made with ("" on a server without tokens).
    Set for the servicer's code by :class:`TokenInterceptor`; ``context`` is accepted so a
    servicer reads as ``caller(context)``."""
    return _CALLER.get()


def caller_role(context: object = None) -> str:
    """The role (OPERATOR or RUNNER) of the token the current call was made with; OPERATOR on
    a server without tokens."""
    return _ROLE.get()


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


def _denied(
    handler: grpc.RpcMethodHandler[_Req, _Resp], reason: str, code: grpc.StatusCode = grpc.StatusCode.UNAUTHENTICATED
) -> grpc.RpcMethodHandler[_Req, _Resp]:
    """A handler of the same shape as ``handler`` that only aborts with ``code`` and ``reason``."""

    async def deny(_request: object, context: grpc.aio.ServicerContext[_Req, _Resp]) -> None:
        await context.abort(code, reason)

    de, ser = handler.request_deserializer, handler.response_serializer
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(deny, request_deserializer=de, response_serializer=ser)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(deny, request_deserializer=de, response_serializer=ser)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(deny, request_deserializer=de, response_serializer=ser)
    return grpc.stream_stream_rpc_method_handler(deny, request_deserializer=de, response_serializer=ser)


#: A refused call whose client keeps writing is read (and discarded) until the client stops
#: writing this long, half-closes, or DRAIN_LIMIT_S have passed, and only then answered: grpc's
#: Python client turns a write in flight when the status arrives into INTERNAL, hiding the
#: UNAUTHENTICATED the server sent.
DRAIN_QUIET_S = 0.25
DRAIN_LIMIT_S = 10.0
_CROWDED = "too many refused calls from this address: wait and retry"


def _discard(_data: bytes) -> Any:
    """The request deserializer of a refused call: a stranger's bytes are not parsed (Any: it
    stands in for the call's own deserializer, whatever the request type)."""
    return None


async def _drain(requests: AsyncIterator[object], *, at_least: float) -> None:
    """Read and drop ``requests`` for at least ``at_least`` seconds, then until the client
    half-closes or writes nothing for DRAIN_QUIET_S; never past DRAIN_LIMIT_S. What cancels
    it: the call ending (its task is cancelled)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    it = requests.__aiter__()
    pending: asyncio.Future[object] | None = None
    try:
        while (now := loop.time()) - start < DRAIN_LIMIT_S:
            if pending is None:
                pending = asyncio.ensure_future(it.__anext__())
            wait = min(max(DRAIN_QUIET_S, start + at_least - now), start + DRAIN_LIMIT_S - now)
            done, _ = await asyncio.wait({pending}, timeout=wait)
            if not done:
                if loop.time() - start >= at_least:
                    return  # the client stopped writing: it will read the answer
                continue
            finished, pending = pending, None
            if finished.exception() is not None:  # StopAsyncIteration: half-closed; else the call broke
                await asyncio.sleep(max(0.0, start + at_least - loop.time()))
                return
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending


def _refused(
    handler: grpc.RpcMethodHandler[_Req, _Resp], reason: str, why: str, throttle: FailedAuthThrottle
) -> grpc.RpcMethodHandler[_Req, _Resp]:
    """A handler of ``handler``'s shape that refuses with UNAUTHENTICATED and ``reason``: held
    back as long as the throttle says for the caller's address (``why`` is what the log says),
    the client's messages read meanwhile; refused at once as RESOURCE_EXHAUSTED when the
    address already has too many refusals held."""

    async def refuse(context: grpc.aio.ServicerContext[_Req, _Resp], requests: AsyncIterator[object] | None = None) -> None:
        peer = peer_address(context.peer())
        if throttle.crowded(peer):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, _CROWDED)
        delay = throttle.failed(peer, why)
        throttle.hold(peer)
        try:
            if requests is not None:
                await _drain(requests, at_least=delay)
            elif delay:
                await asyncio.sleep(delay)
        finally:
            throttle.release(peer)
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, reason)

    async def unary_request(_request: object, context: grpc.aio.ServicerContext[_Req, _Resp]) -> None:
        await refuse(context)

    async def stream_request(requests: AsyncIterator[object], context: grpc.aio.ServicerContext[_Req, _Resp]) -> None:
        await refuse(context, requests)

    ser = handler.response_serializer
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(unary_request, request_deserializer=_discard, response_serializer=ser)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(unary_request, request_deserializer=_discard, response_serializer=ser)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(stream_request, request_deserializer=_discard, response_serializer=ser)
    return grpc.stream_stream_rpc_method_handler(stream_request, request_deserializer=_discard, response_serializer=ser)


def _as(found: grpc.RpcMethodHandler[_Req, _Resp], name: str, role: str, throttle: FailedAuthThrottle) -> grpc.RpcMethodHandler[_Req, _Resp]:
    """``handler`` with its behaviour run while :func:`caller` answers ``name`` (and
    :func:`caller_role` ``role``). An address
    with too many refusals held is refused even with a right token (otherwise the answer
    would tell a guess was right); the others clear their address's count."""

    handler = aio(found)

    async def admit(context: Context[_Req, _Resp]) -> None:
        peer = peer_address(context.peer())
        if throttle.crowded(peer):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, _CROWDED)
        throttle.succeeded(peer)
        _CALLER.set(name)  # this call's own task: nothing else sees it
        _ROLE.set(role)

    def call(behavior: Callable[[_In, Context[_Req, _Resp]], Awaitable[_Resp]]) -> Callable[[_In, Context[_Req, _Resp]], Awaitable[_Resp]]:
        async def unary(request: _In, context: Context[_Req, _Resp]) -> _Resp:
            await admit(context)
            return await behavior(request, context)

        return unary

    def stream(
        behavior: Callable[[_In, Context[_Req, _Resp]], AsyncIterator[_Resp]],
    ) -> Callable[[_In, Context[_Req, _Resp]], AsyncIterator[_Resp]]:
        async def streaming(request: _In, context: Context[_Req, _Resp]) -> AsyncIterator[_Resp]:
            await admit(context)
            async for item in behavior(request, context):
                yield item

        return streaming

    if handler.unary_unary is not None:
        return for_grpc(handler._replace(unary_unary=call(handler.unary_unary)))
    if handler.stream_unary is not None:
        return for_grpc(handler._replace(stream_unary=call(handler.stream_unary)))
    if handler.unary_stream is not None:
        return for_grpc(handler._replace(unary_stream=stream(handler.unary_stream)))
    if handler.stream_stream is not None:
        return for_grpc(handler._replace(stream_stream=stream(handler.stream_stream)))
    return found


class TokenInterceptor(grpc.aio.ServerInterceptor):
    """Every RPC must carry ``authorization: Bearer <token>`` of one of the server's tokens
    (compared in constant time). An operator token may call everything; a runner token only
    :data:`RUNNER_METHODS`, other calls get PERMISSION_DENIED. The token's name is what
    :func:`caller` answers inside the call. A missing or wrong token is logged and answered
    slower and slower per client address (:mod:`goldfive.remote.throttle`)."""

    def __init__(self, token: str | Sequence[Credential], *, throttle: FailedAuthThrottle | None = None) -> None:
        creds = credentials(token) if isinstance(token, str) else list(token)
        if not creds or any(not c.secret for c in creds):
            raise ServeConfigError("an empty token would let anyone in; pass None for no token")
        self._expected = [((_SCHEME + c.secret).encode(), c) for c in creds]
        self.throttle = throttle if throttle is not None else FailedAuthThrottle()

    def _match(self, given: bytes) -> Credential | None:
        found = None
        for expected, cred in self._expected:  # every one compared: the time says nothing
            if hmac.compare_digest(given, expected):
                found = cred
        return found

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
            return _refused(handler, "missing token: send metadata 'authorization: Bearer <token>'", "no token", self.throttle)
        cred = self._match(given)
        if cred is None:
            return _refused(handler, "wrong token", "wrong token", self.throttle)
        if cred.role != OPERATOR and handler_call_details.method not in RUNNER_METHODS:
            what = handler_call_details.method.rsplit("/", 1)[-1]
            return _denied(
                handler,
                f"token {cred.name!r} is a runner token: it may only connect a run (Hub.Connect), not call {what}; "
                "listing, watching and controlling runs needs an operator token",
                grpc.StatusCode.PERMISSION_DENIED,
            )
        return _as(handler, cred.name, cred.role, self.throttle)
