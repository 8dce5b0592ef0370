"""The ``goldfive ctl ADDR`` group: its options (accepted after the subcommand too), the client
call every subcommand makes, and how a failure becomes one line and an exit code."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click
from google.protobuf import json_format

from goldfive.cli.output import echo, field
from goldfive.errors import GoldfiveError, RemoteError
from goldfive.link.client import RemoteClient

__all__ = ["ctl"]

EXIT_FAILURE = 1
EXIT_ERROR = 2
#: Seconds ctl waits for its connection to the hub before its call: a loaded hub may refuse or
#: drop the first try (gRPC tries again with its backoff). Nothing is sent before it is up, so
#: no call (no control) is ever sent twice; a hub that is not there costs this long.
CONNECT_WAIT = 3.0
T = TypeVar("T")


@dataclass(frozen=True)
class _Opts:
    addr: str
    token: str | None
    tls_ca: str | None
    as_json: bool
    #: This client's certificate and key, for a server started with --tls-client-ca.
    tls_cert: str | None = None
    tls_key: str | None = None


def _fail(message: str, code: int = EXIT_ERROR) -> click.exceptions.Exit:
    echo(f"goldfive ctl: error: {field(message)}", err=True)  # a hub's refusal can quote a run's text
    return click.exceptions.Exit(code)


def addr_problem(addr: str) -> str | None:
    """Why ``addr`` cannot be a server address, or None; said before gRPC turns a missing
    port into a name-resolution error."""
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port:
        return f"ADDR {addr!r} must be HOST:PORT, e.g. 127.0.0.1:7531"
    return None


def client_cert_problem(tls_cert: str | None, tls_key: str | None) -> str | None:
    """Why a client certificate and key cannot be used as given, or None."""
    if (tls_cert is None) != (tls_key is None):
        return "--tls-cert and --tls-key go together: give this client's certificate and its key"
    return None


def _call(opts: _Opts, fn: Callable[[RemoteClient], Awaitable[T]]) -> T:
    # Checked here, not in the group: "goldfive ctl ADDR status --help" must still show help.
    problem = addr_problem(opts.addr) or client_cert_problem(opts.tls_cert, opts.tls_key)
    if problem is not None:
        raise _fail(problem)
    async def main() -> T:
        client = RemoteClient(
            opts.addr, token=opts.token, tls_ca=opts.tls_ca, tls_client_cert=opts.tls_cert, tls_client_key=opts.tls_key
        )
        async with client:
            await client.wait_ready(CONNECT_WAIT)  # not up by then: the call says why, in words
            return await fn(client)

    try:
        return asyncio.run(main())
    except RemoteError as exc:
        raise _fail(exc.in_words(opts.addr)) from None
    except (GoldfiveError, OSError) as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        raise click.exceptions.Exit(130) from None


def _dict(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _token(given: str | None, path: str | None, env: str | None) -> str | None:
    """``--token``, else ``--token-file``'s, else ``env``; a bad file is one line, exit 2."""
    from goldfive.inputs import InputError
    from goldfive.cli.tokens import client_token

    try:
        return client_token(given, path, env, flag="--token", warn=lambda m: echo(f"goldfive ctl: warning: {m}", err=True))
    except InputError as exc:
        raise _fail(str(exc)) from None


def _merge(ctx: click.Context, sub: _Opts) -> _Opts:
    base: _Opts = ctx.obj
    return _Opts(
        base.addr,
        sub.token or base.token,
        sub.tls_ca or base.tls_ca,
        sub.as_json or base.as_json,
        sub.tls_cert or base.tls_cert,
        sub.tls_key or base.tls_key,
    )


_PEM = click.Path(exists=True, dir_okay=False)
_CERT_HELP = "This client's certificate (PEM), for a server that requires one."
_KEY_HELP = "The private key (PEM) of --tls-cert."
_TOKEN_FILE_HELP = "Read the bearer token from FILE (kept out of the process list)."


def _options(fn: Callable[..., None]) -> Callable[..., None]:
    """The group's options are accepted after the subcommand too (``ctl ADDR pause --json RUN``)."""

    def wrapper(
        ctx: click.Context,
        sub_token: str | None,
        sub_token_file: str | None,
        sub_tls_ca: str | None,
        sub_tls_cert: str | None,
        sub_tls_key: str | None,
        sub_json: bool,
        **kw: Any,
    ) -> None:
        token = _token(sub_token, sub_token_file, None)
        fn(_merge(ctx, _Opts("", token, sub_tls_ca, sub_json, sub_tls_cert, sub_tls_key)), **kw)

    # click reads the command's name and help from these; set by hand (not functools.wraps)
    # so the wrapper keeps its own signature for click.pass_context's type.
    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    command: Callable[..., None] = click.pass_context(wrapper)
    for option in reversed(
        (
            click.option("--token", "sub_token", help="Bearer token (default: GOLDFIVE_TOKEN)."),
            click.option("--token-file", "sub_token_file", metavar="FILE", help=_TOKEN_FILE_HELP),
            click.option("--tls-ca", "sub_tls_ca", type=_PEM, help="CA certificate (PEM)."),
            click.option("--tls-cert", "sub_tls_cert", type=_PEM, help=_CERT_HELP),
            click.option("--tls-key", "sub_tls_key", type=_PEM, help=_KEY_HELP),
            click.option("--json", "sub_json", is_flag=True, help="Print JSON instead of text."),
        )
    ):
        command = option(command)
    return command


class _CtlGroup(click.Group):
    """Accepts the group's options after ADDR too (``ctl ADDR --json runs``): the options
    between ADDR and the subcommand are moved in front of ADDR before click parses them."""

    _VALUED = ("--token", "--token-file", "--tls-ca", "--tls-cert", "--tls-key")

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        options: list[str] = []
        positional: list[str] = []
        i = 0
        while i < len(args):
            tok = args[i]
            if positional and tok in self.commands:
                break
            if tok in self._VALUED and i + 1 < len(args):
                options += args[i : i + 2]
                i += 2
                continue
            (options if tok.startswith("-") else positional).append(tok)
            i += 1
        return super().parse_args(ctx, options + positional + args[i:])


@click.group("ctl", cls=_CtlGroup)
@click.argument("addr", metavar="ADDR")
@click.option("--token", help="Bearer token (default: GOLDFIVE_TOKEN).")
@click.option("--token-file", metavar="FILE", help=_TOKEN_FILE_HELP)
@click.option("--tls-ca", type=_PEM, help="CA certificate (PEM): use TLS.")
@click.option("--tls-cert", type=_PEM, help=_CERT_HELP)
@click.option("--tls-key", type=_PEM, help=_KEY_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def ctl(
    ctx: click.Context,
    addr: str,
    token: str | None,
    token_file: str | None,
    tls_ca: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    as_json: bool,
) -> None:
    """Inspect and control the runs served at ADDR (HOST:PORT)."""
    from goldfive.settings import remote_token

    ctx.obj = _Opts(addr, _token(token, token_file, remote_token()), tls_ca, as_json, tls_cert, tls_key)


#: The RUN argument of every subcommand that acts on one run.
_RUN = click.argument("run_id", metavar="RUN")
