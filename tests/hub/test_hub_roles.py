"""Operator and runner tokens: how they are given (named or bare), which combinations
``goldfive serve`` refuses (one line), and what a runner token may call on a real server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from goldfive.errors import ServeConfigError
from goldfive.pb.goldfive.v1 import service_pb2
from goldfive.remote import RunHost, start_server
from goldfive.remote.auth import MIN_TOKEN_CHARS, OPERATOR, RUNNER, bearer_metadata, credentials

LONG = "s" * MIN_TOKEN_CHARS


def test_tokens_are_named_or_take_their_roles_name() -> None:
    creds = credentials(["alice=" + LONG, "x" * 20], ["ci=" + "c" * 20])
    assert [(c.name, c.role) for c in creds] == [("alice", OPERATOR), ("operator", OPERATOR), ("ci", RUNNER)]
    assert creds[0].secret == LONG and LONG not in repr(creds)
    padded = credentials("dGhpcyBpcyBhIHRva2Vu==")  # base64 padding is not a name
    assert (padded[0].name, padded[0].secret) == ("operator", "dGhpcyBpcyBhIHRva2Vu==")
    assert credentials(None) == [] and credentials("") == []


@pytest.mark.parametrize(
    ("operator", "runner", "says"),
    [
        (["a=" + LONG, "a=" + "t" * 20], None, "two tokens are named 'a'"),
        (["a=" + LONG], ["b=" + LONG], "has the same secret as another token"),
        (None, ["ci=" + LONG], "--runner-token needs --token too"),
    ],
)
def test_bad_token_sets_are_refused_in_words(operator: list[str] | None, runner: list[str] | None, says: str) -> None:
    with pytest.raises(ServeConfigError, match=says):
        credentials(operator, runner)


def _serve(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    result = subprocess.run(
        [sys.executable, "-m", "goldfive.cli", "serve", "--db", str(tmp_path / "runs.sqlite"), *args],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    return result.returncode, [line for line in result.stderr.splitlines() if line.strip()]


def test_serve_refuses_a_short_runner_token_beyond_loopback_and_a_runner_token_alone(tmp_path: Path) -> None:
    code, lines = _serve(tmp_path, "--listen", "0.0.0.0:0", "--token", LONG, "--runner-token", "ci=short")
    assert code == 2 and lines == [
        "goldfive serve: error: refusing to listen on 0.0.0.0:0: the runner token 'ci' has 5 characters; "
        f"a non-loopback address needs at least {MIN_TOKEN_CHARS}"
    ]
    code, lines = _serve(tmp_path, "--listen", "127.0.0.1:0", "--runner-token", LONG)
    assert code == 2 and len(lines) == 1 and "--runner-token needs --token too" in lines[0]


async def test_a_runner_token_reaches_hub_connect_and_nothing_else(tmp_path: Path) -> None:
    server = await start_server(RunHost(tmp_path / "r.sqlite"), listen="127.0.0.1:0", token="op=" + LONG, runner_token="ci=" + "c" * 20)
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            runner = bearer_metadata("c" * 20)
            # Hub.Connect is not served by this side of the hub: past the token check, the
            # server says UNIMPLEMENTED, not PERMISSION_DENIED.
            connect = ch.stream_stream("/goldfive.v1.Hub/Connect", request_serializer=service_pb2.RunnerMessage.SerializeToString,
                                       response_deserializer=service_pb2.HubMessage.FromString)  # fmt: skip
            call = connect(iter([service_pb2.RunnerMessage()]), metadata=runner, timeout=5)
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                async for _ in call:
                    pass
            assert exc.value.code() is not grpc.StatusCode.PERMISSION_DENIED
            assert exc.value.code() is not grpc.StatusCode.UNAUTHENTICATED
            start = ch.unary_unary("/goldfive.v1.Runs/StartRun", request_serializer=service_pb2.StartRunRequest.SerializeToString,
                                   response_deserializer=service_pb2.StartRunResponse.FromString)  # fmt: skip
            with pytest.raises(grpc.aio.AioRpcError) as denied:
                await start(service_pb2.StartRunRequest(agent="demo"), metadata=runner)
            assert denied.value.code() is grpc.StatusCode.PERMISSION_DENIED
            assert "token 'ci' is a runner token" in (denied.value.details() or "")
            assert server.host.runs() == []
    finally:
        await server.stop(None)
