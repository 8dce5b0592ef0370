"""Who may reach a server beyond loopback: TLS alone is not enough; a token of 16+ characters
or client certificates (``--tls-client-ca``) are. Loopback needs neither."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from goldfive.errors import RemoteError, ServeConfigError
from goldfive.remote import RemoteClient, RunHost, start_server
from goldfive.remote.auth import MIN_TOKEN_CHARS, check_listen
from tests.remote_fixtures import ca_signed_client_cert, self_signed_cert

LONG_TOKEN = "t" * MIN_TOKEN_CHARS


def _serve(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    """Exit code and stderr lines of ``goldfive serve``; a server that starts instead of
    refusing is killed by the timeout and fails the test rather than hanging it."""
    result = subprocess.run(
        [sys.executable, "-m", "goldfive.cli", "serve", "--db", str(tmp_path / "runs.sqlite"), *args],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return result.returncode, [line for line in result.stderr.splitlines() if line.strip()]


def test_serve_refuses_tls_without_token_on_a_non_loopback_address(tmp_path: Path) -> None:
    cert, key = self_signed_cert(tmp_path)
    code, lines = _serve(tmp_path, "--listen", "0.0.0.0:0", "--tls-cert", str(cert), "--tls-key", str(key))
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("goldfive serve: error: refusing to listen on 0.0.0.0:0")
    assert "token" in lines[0] and "--tls-client-ca" in lines[0]


def test_serve_refuses_a_short_token_on_a_non_loopback_address(tmp_path: Path) -> None:
    code, lines = _serve(tmp_path, "--listen", "0.0.0.0:0", "--token", "short")
    assert code == 2
    assert lines == [
        "goldfive serve: error: refusing to listen on 0.0.0.0:0: the token has 5 characters; "
        f"a non-loopback address needs at least {MIN_TOKEN_CHARS}"
    ]


def test_listen_rules_for_tokens_and_client_certificates() -> None:
    check_listen("127.0.0.1:7531", token=None, client_certs=False)  # loopback: nothing needed
    check_listen("localhost:7531", token="x", client_certs=False)  # a short token is fine there
    check_listen("0.0.0.0:7531", token=LONG_TOKEN, client_certs=False)
    check_listen("0.0.0.0:7531", token=None, client_certs=True)
    with pytest.raises(ServeConfigError, match="not a loopback address"):
        check_listen("0.0.0.0:7531", token=None, client_certs=False)
    with pytest.raises(ServeConfigError, match=f"needs at least {MIN_TOKEN_CHARS}"):
        check_listen("example.org:7531", token=LONG_TOKEN[1:], client_certs=False)


async def test_tls_alone_is_refused_beyond_loopback_but_not_on_it(tmp_path: Path) -> None:
    cert, key = self_signed_cert(tmp_path)
    with pytest.raises(ServeConfigError, match="not a loopback address"):
        await start_server(RunHost(tmp_path / "a.sqlite"), listen="0.0.0.0:0", tls_cert=cert, tls_key=key)
    server = await start_server(RunHost(tmp_path / "b.sqlite"), listen="127.0.0.1:0", tls_cert=cert, tls_key=key)
    await server.stop(None)


async def test_a_client_ca_without_tls_is_refused(tmp_path: Path) -> None:
    ca, _, _ = ca_signed_client_cert(tmp_path)
    with pytest.raises(ServeConfigError, match="--tls-client-ca needs TLS"):
        await start_server(RunHost(tmp_path / "r.sqlite"), listen="127.0.0.1:0", tls_client_ca=ca)


async def test_client_certificates_let_a_non_loopback_server_start_and_admit_only_signed_clients(
    tmp_path: Path,
) -> None:
    server_cert, server_key = self_signed_cert(tmp_path)
    ca, client_cert, client_key = ca_signed_client_cert(tmp_path / "good")
    _, stranger_cert, stranger_key = ca_signed_client_cert(tmp_path / "other", name="stranger")
    server = await start_server(
        RunHost(tmp_path / "r.sqlite"), listen="0.0.0.0:0", tls_cert=server_cert, tls_key=server_key, tls_client_ca=ca
    )
    addr = f"127.0.0.1:{server.port}"
    try:
        assert server.client_certs
        async with RemoteClient(addr, tls_ca=server_cert, tls_client_cert=client_cert, tls_client_key=client_key) as ok:
            assert await ok.list_runs() == []
        for cert, key in ((None, None), (stranger_cert, stranger_key)):
            async with RemoteClient(addr, tls_ca=server_cert, tls_client_cert=cert, tls_client_key=key) as refused:
                with pytest.raises(RemoteError) as caught:
                    await refused.list_runs(timeout=3)
                assert caught.value.code == "UNAVAILABLE"  # the handshake fails: no call gets through
    finally:
        await server.stop(None)


def test_ctl_and_attach_present_a_client_certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from goldfive.cli import FRONTENDS, main
    from tests.cli.test_cli_remote import ServerThread

    server_cert, server_key = self_signed_cert(tmp_path)
    ca, cert, key = ca_signed_client_cert(tmp_path / "client")
    st = ServerThread(tmp_path / "runs.sqlite", tls_cert=server_cert, tls_key=server_key, tls_client_ca=ca)
    opened: list[dict[str, Any]] = []
    monkeypatch.setitem(FRONTENDS, "attach", lambda addr, run_id, **kw: opened.append(kw) or 0)
    tls = ["--tls-ca", str(server_cert), "--tls-cert", str(cert), "--tls-key", str(key)]
    try:
        runs = CliRunner().invoke(main, ["ctl", st.addr, *tls, "runs"])
        assert runs.exit_code == 0 and runs.stdout.startswith("r1"), runs.output
        paused = CliRunner().invoke(main, ["ctl", st.addr, "pause", *tls, "r1"])  # options after the subcommand
        assert paused.exit_code == 0, paused.output
        refused = CliRunner().invoke(main, ["ctl", st.addr, "--tls-ca", str(server_cert), "runs"])
        assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
        half = CliRunner().invoke(main, ["ctl", st.addr, "--tls-ca", str(server_cert), "--tls-cert", str(cert), "runs"])
        assert half.exit_code == 2
        assert half.output.strip() == "goldfive ctl: error: --tls-cert and --tls-key go together: give this client's certificate and its key"
        attached = CliRunner().invoke(main, ["attach", st.addr, *tls])
        assert attached.exit_code == 0, attached.output
        assert opened == [{"token": None, "tls_ca": str(server_cert), "tls_client_cert": str(cert), "tls_client_key": str(key)}]
    finally:
        st.stop()
