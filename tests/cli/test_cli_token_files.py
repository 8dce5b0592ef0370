"""Secrets kept out of the process list: every token kind has a ``-file`` option and an
environment variable. A token file is read once, its trailing newline dropped; an empty or
unreadable file is one line and exit 2; a file others may read is used, with a warning."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from goldfive.cli import main
from goldfive.inputs import InputError
from goldfive.cli.tokens import read_token_file
from goldfive.errors import GoldfiveError
from goldfive.settings import hub_token
from tests.cli.test_cli_remote import ServerThread

SECRET = "s3cret-token-of-24-chars"


def _file(tmp_path: Path, text: str, mode: int = 0o600, name: str = "token") -> str:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def _invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(main, list(args), env={"GOLDFIVE_TOKEN": "", **(env or {})}, catch_exceptions=False)


# -- the file ---------------------------------------------------------------------------------


def test_a_token_file_loses_its_trailing_newline_and_nothing_else(tmp_path: Path) -> None:
    warnings: list[str] = []
    assert read_token_file(_file(tmp_path, SECRET + "\n"), "--token-file", warn=warnings.append) == [SECRET]
    assert read_token_file(_file(tmp_path, " a b \r\n"), "--token-file", warn=warnings.append) == [" a b "]
    several = _file(tmp_path, "alice=one-secret\n\nbob=two-secret\n")
    assert read_token_file(several, "--token-file", warn=warnings.append, several=True) == ["alice=one-secret", "bob=two-secret"]
    assert warnings == []


@pytest.mark.parametrize(
    ("content", "why"), [("", "is empty"), ("\n", "is empty"), ("one\ntwo\n", "holds several lines")]
)
def test_an_empty_or_several_line_file_is_refused(tmp_path: Path, content: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        read_token_file(_file(tmp_path, content), "--token-file", warn=lambda m: None)


def test_an_unreadable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read it: No such file"):
        read_token_file(str(tmp_path / "missing"), "--token-file", warn=lambda m: None)
    with pytest.raises(InputError, match="not a regular file"):
        read_token_file(str(tmp_path), "--token-file", warn=lambda m: None)


def test_a_file_others_may_read_is_used_with_a_warning(tmp_path: Path) -> None:
    warnings: list[str] = []
    path = _file(tmp_path, SECRET, mode=0o644)
    assert read_token_file(path, "--token-file", warn=warnings.append) == [SECRET]
    assert warnings == [f"--token-file {path} may be read by other users (mode 0644); chmod 600 {path}"]


# -- the commands -----------------------------------------------------------------------------


@pytest.fixture
def guarded(tmp_path: Path) -> Any:
    st = ServerThread(tmp_path / "runs.sqlite", token=SECRET)
    yield st
    st.stop()


def test_ctl_reads_its_token_from_a_file_before_or_after_the_subcommand(guarded: Any, tmp_path: Path) -> None:
    good = _file(tmp_path, SECRET + "\n")
    assert _invoke("ctl", guarded.addr, "--token-file", good, "runs").exit_code == 0
    assert _invoke("ctl", "--token-file", good, guarded.addr, "runs").exit_code == 0
    assert _invoke("ctl", guarded.addr, "status", "r1", "--token-file", good).exit_code == 0
    wrong = _invoke("ctl", guarded.addr, "--token-file", _file(tmp_path, "not-the-token", name="wrong"), "runs")
    assert wrong.exit_code == 2 and "refused the token" in wrong.output


def test_ctl_with_an_empty_or_missing_token_file_says_so_in_one_line(guarded: Any, tmp_path: Path) -> None:
    for path, why in ((_file(tmp_path, ""), "is empty"), (str(tmp_path / "none"), "cannot read it")):
        result = _invoke("ctl", guarded.addr, "--token-file", path, "runs")
        assert result.exit_code == 2 and why in result.output and len(result.output.strip().splitlines()) == 1
    both = _invoke("ctl", guarded.addr, "--token", SECRET, "--token-file", _file(tmp_path, SECRET), "runs")
    assert both.exit_code == 2 and "give one" in both.output


def test_ctl_warns_of_a_token_file_others_may_read(guarded: Any, tmp_path: Path) -> None:
    result = _invoke("ctl", guarded.addr, "--token-file", _file(tmp_path, SECRET, mode=0o640), "runs")
    assert result.exit_code == 0 and "may be read by other users (mode 0640)" in result.output


def test_attach_reads_its_token_from_a_file(guarded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldfive.cli import FRONTENDS

    opened: list[Any] = []
    monkeypatch.setitem(FRONTENDS, "attach", lambda addr, run_id, **kw: opened.append(kw["token"]) or 0)
    assert _invoke("attach", guarded.addr, "--token-file", _file(tmp_path, SECRET + "\n")).exit_code == 0
    assert opened == [SECRET]
    bad = _invoke("attach", guarded.addr, "--token-file", _file(tmp_path, "", name="empty"))
    assert bad.exit_code == 2 and "--token-file" in bad.output and "is empty" in bad.output


def _serve_args(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What ``serve`` would be started with (the server itself is not started)."""
    import goldfive.remote.server as server

    seen: dict[str, Any] = {}

    async def fake_serve(listen: str, token: Any, *args: Any, runner_token: Any = None, **kw: Any) -> None:
        seen.update(token=token, runner_token=runner_token)
        raise GoldfiveError("stopped by the test")

    monkeypatch.setattr(server, "serve", fake_serve)
    return seen


def test_serve_reads_operator_and_runner_tokens_from_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _serve_args(monkeypatch)
    ops = _file(tmp_path, "alice=alice-secret-0123456789\nbob=bob-secret-0123456789\n", name="ops")
    runners = _file(tmp_path, "ci=ci-secret-0123456789\n", name="runners")
    result = _invoke("serve", "--db", str(tmp_path / "db.sqlite"), "--token-file", ops, "--runner-token-file", runners)
    assert "stopped by the test" in result.output
    assert seen == {"token": ["alice=alice-secret-0123456789", "bob=bob-secret-0123456789"], "runner_token": ["ci=ci-secret-0123456789"]}


def test_serve_takes_the_runner_token_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _serve_args(monkeypatch)
    env = {"GOLDFIVE_TOKEN": "op-secret-0123456789", "GOLDFIVE_RUNNER_TOKEN": "ci=ci-secret-0123456789"}
    _invoke("serve", "--db", str(tmp_path / "db.sqlite"), env=env)
    assert seen == {"token": ["op-secret-0123456789"], "runner_token": ["ci=ci-secret-0123456789"]}
    alone = _invoke("serve", "--db", str(tmp_path / "db.sqlite"), env={"GOLDFIVE_RUNNER_TOKEN": "ci-secret"})
    assert alone.exit_code == 2 and "GOLDFIVE_RUNNER_TOKEN is set but no operator token" in alone.output


def test_serve_refuses_an_empty_token_file_in_one_line(tmp_path: Path) -> None:
    result = _invoke("serve", "--db", str(tmp_path / "db.sqlite"), "--runner-token-file", _file(tmp_path, "\n"))
    assert result.exit_code == 2 and "--runner-token-file" in result.output and "is empty" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_run_reads_the_hub_token_and_the_api_key_from_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import goldfive.cli.local as local

    seen: dict[str, Any] = {}

    def factory(agent: Any, planner: Any, goal: str, launch: Any = None, hub: Any = None) -> Any:
        seen.update(hub or {})
        raise click.exceptions.Exit(0)

    monkeypatch.setattr(local, "_runner_factory", factory)
    plan = str(Path(__file__).resolve().parents[2] / "examples" / "hello_plan.json")
    token = _file(tmp_path, SECRET + "\n")
    result = _invoke("run", "examples.hello_agent:agent", "--goal", "g", "--plan", plan, "--hub", "127.0.0.1:7531", "--hub-token-file", token)
    assert result.exit_code == 0 and seen["hub_token"] == SECRET
    key = _invoke("run", "examples.hello_agent:agent", "--goal", "g", "--api-key-file", str(tmp_path / "none"))
    assert key.exit_code == 2 and "--api-key-file" in key.output and "cannot read it" in key.output
    alone = _invoke("run", "examples.hello_agent:agent", "--goal", "g", "--plan", plan, "--hub-token-file", token)
    assert alone.exit_code == 2 and "goes with --hub" in alone.output


def test_a_run_presents_goldfive_hub_token_else_goldfive_token() -> None:
    assert hub_token({"GOLDFIVE_HUB_TOKEN": "runner-side", "GOLDFIVE_TOKEN": "operator"}) == "runner-side"
    assert hub_token({"GOLDFIVE_TOKEN": "operator"}) == "operator"
    assert hub_token({}) is None


def test_token_files_are_not_left_open(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        read_token_file(_file(tmp_path, SECRET), "--token-file", warn=lambda m: None)
    with pytest.raises(InputError):
        read_token_file(_file(tmp_path, "", name="e"), "--token-file", warn=lambda m: None)
    assert len(os.listdir("/proc/self/fd")) <= before
