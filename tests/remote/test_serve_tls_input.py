"""``serve --tls-cert/--tls-key`` with files that are not PEM: one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from goldfive.cli import main
from goldfive.errors import ServeConfigError
from goldfive.remote import RunHost, start_server
from tests.remote_fixtures import self_signed_cert


async def test_a_certificate_that_is_not_pem_is_named(tmp_path: Path) -> None:
    _, key = self_signed_cert(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    with pytest.raises(ServeConfigError, match="--tls-cert '.*notes.txt' is not a PEM certificate"):
        await start_server(RunHost(tmp_path / "r.sqlite"), listen="127.0.0.1:0", tls_cert=notes, tls_key=key)


async def test_a_key_that_is_not_pem_is_named(tmp_path: Path) -> None:
    cert, _ = self_signed_cert(tmp_path)
    with pytest.raises(ServeConfigError, match="--tls-key '.*' is not a PEM private key"):
        # the certificate given as the key: PEM, but no private key in it
        await start_server(RunHost(tmp_path / "r.sqlite"), listen="127.0.0.1:0", tls_cert=cert, tls_key=cert)


def test_serve_with_a_non_pem_certificate_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path / "data"))
    junk = tmp_path / "plan.json"
    junk.write_text("{}\n")
    result = CliRunner().invoke(main, ["serve", "--listen", "127.0.0.1:0", "--tls-cert", str(junk), "--tls-key", str(junk), "demo"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"goldfive serve: error: --tls-cert {str(junk)!r} is not a PEM certificate"]


async def test_a_certificate_and_key_that_do_not_match_are_said_to_be_refused(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    cert, _ = self_signed_cert(tmp_path / "one")
    _, other_key = self_signed_cert(tmp_path / "two")
    with pytest.raises(ServeConfigError, match="TLS certificate and key were refused"):
        server = await start_server(RunHost(tmp_path / "r.sqlite"), listen="127.0.0.1:0", tls_cert=cert, tls_key=other_key)
        await server.stop(None)
