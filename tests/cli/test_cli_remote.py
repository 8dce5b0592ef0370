"""``goldfive ctl`` exit codes and output, and ``goldfive serve`` refusals, against a real server
running on its own event loop in a thread (click's CliRunner calls asyncio.run itself)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from goldfive.cli import main
from goldfive.testing import free_port as _free_port
from goldfive.testing import HubThread, ctl
from tests.remote_fixtures import Gate, gated_factory


class ServerThread(HubThread):
    """A hub hosting gated run ``run_id`` ("r1")."""

    def __init__(self, db: Path, token: str | None = None, run_id: str = "r1", **server_kw: Any) -> None:
        self.run_id = run_id
        super().__init__(db, call_timeout=20, token=token, **server_kw)
        self.gate: Gate
        self.call(self._start_run())

    async def _start_run(self) -> None:
        self.gate = Gate()
        self.host.start_run(gated_factory(self.gate), "do three things", run_id=self.run_id)
        await self.gate.entered.wait()

    async def _finish(self) -> None:
        self.gate.open()
        run = self.server.host.get(self.run_id)
        assert run is not None and run.task is not None
        await run.task

    def finish_run(self) -> None:
        self.call(self._finish())

    def stop(self) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.gate.open)
        super().stop()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServerThread]:
    st = ServerThread(tmp_path / "runs.sqlite")
    yield st
    st.stop()


def test_ctl_exits_0_when_the_ack_is_success(served):
    result = ctl(served.addr, "pause", "r1")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("PAUSE SUCCESS")


def test_ctl_runs_header_lines_up_with_its_columns(served):
    """Each header word starts where its field does in the rows (the trial: it did not)."""
    import re

    result = CliRunner().invoke(main, ["ctl", served.addr, "runs"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (header,), rows = result.stderr.splitlines(), result.stdout.splitlines()
    assert rows and header.startswith("RUN ")

    def starts(line: str) -> list[int]:  # fields are apart by two spaces or more
        return [m.start() for m in re.finditer(r"\S+(?: \S+)*", line)]

    names = ["RUN", "STATE", "TASKS", "ORIGIN", "HOST:PID", "NEEDS YOU", "TASK", "STARTED", "USAGE", "GOAL [NOTES]"]
    assert [header[i:].split("  ")[0] for i in starts(header)] == names
    for row in rows:
        assert starts(row)[: len(names)] == starts(header), (header, row)


def test_ctl_exits_1_when_the_ack_is_failure(served):
    result = ctl(served.addr, "rewind", "r1", "no-such-task")
    assert result.exit_code == 1
    assert "REWIND_TO FAILURE" in result.output and "no-such-task" in result.output


def test_ctl_json_prints_the_ack_and_options_may_follow_addr(served):
    result = ctl(served.addr, "--json", "pause", "r1")
    assert result.exit_code == 0
    ack = json.loads(result.output)
    assert (ack["kind"], ack["result"]) == ("PAUSE", "SUCCESS")
    result = ctl(served.addr, "runs", "--json")
    assert [r["run_id"] for r in json.loads(result.output)] == ["r1"]


def test_ctl_exits_2_with_one_line_when_the_server_is_unreachable():
    addr = f"127.0.0.1:{_free_port()}"
    result = CliRunner().invoke(main, ["ctl", addr, "pause", "r1"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"nothing answers at {addr}: is a hub running there" in lines[0]
    assert "UNAVAILABLE" not in lines[0] and "failed to connect" not in lines[0]
    assert "Traceback" not in result.output


def test_ctl_waits_briefly_for_a_hub_that_starts_answering_a_moment_after_its_first_try(tmp_path: Path):
    """A loaded hub refused ctl's first connection and ctl said "nothing answers" at once. It
    waits for its connection (gRPC tries again) for a few seconds before its call is sent: a
    hub that is listening by then answers, and the call is sent once."""
    import threading

    addr = f"127.0.0.1:{_free_port()}"
    out: list[Any] = []
    asking = threading.Thread(target=lambda: out.append(ctl(addr, "--json", "runs")))
    asking.start()
    time.sleep(0.5)  # its first try was refused: nothing listened yet
    hub = HubThread(tmp_path / "late.sqlite", listen=addr)
    try:
        asking.join(30)
        assert out and out[0].exit_code == 0, out[0].output if out else "ctl did not end"
        assert json.loads(out[0].output) == []
    finally:
        hub.stop()


def test_attach_says_an_unreachable_hub_in_words_as_ctl_does():
    """The trial: ``goldfive attach`` (the runs screen) printed gRPC's own "UNAVAILABLE: failed
    to connect to all addresses; last error: ..." where ctl says what to check."""
    addr = f"127.0.0.1:{_free_port()}"
    result = CliRunner().invoke(main, ["attach", addr])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [f"goldfive attach: error: nothing answers at {addr}: is a hub running there (goldfive serve --listen {addr})? Check the address and port"]


def test_ctl_exits_2_for_a_refused_call(served):
    for args, code in (
        (("steer", "r1", ""), "INVALID_ARGUMENT"),
        (("status", "nope"), "NOT_FOUND"),
        (("--token", "t", "pause", "r1"), None),  # a server without a token ignores one
    ):
        result = ctl(served.addr, *args)
        if code is None:
            assert result.exit_code == 0
            continue
        assert result.exit_code == 2 and code in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_ctl_wrong_token_exits_2_unauthenticated(tmp_path):
    st = ServerThread(tmp_path / "runs.sqlite", token="s3cret")
    try:
        wrong = ctl(st.addr, "--token", "wrong", "runs")
        assert wrong.exit_code == 2 and f"{st.addr} refused the token" in wrong.output
        missing = ctl(st.addr, "runs").output
        assert f"{st.addr} needs a token: give it with --token-file" in missing
        assert "Bearer" not in missing and "metadata" not in missing and "UNAUTHENTICATED" not in missing
        assert ctl(st.addr, "--token", "s3cret", "status", "r1").exit_code == 0
    finally:
        st.stop()


def test_ctl_tail_prints_every_event_of_a_finished_run(served):
    served.finish_run()
    result = ctl(served.addr, "tail", "r1")
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert [int(line.split()[0]) for line in lines] == list(range(len(lines)))
    assert "run_completed" in lines[-1]
    status = json.loads(ctl(served.addr, "--json", "status", "r1").output)
    assert status["summary"]["state"] == "COMPLETED"


def test_serve_refuses_a_non_loopback_address_without_token_or_tls(tmp_path):
    result = CliRunner().invoke(main, ["serve", "--listen", "0.0.0.0:0", "--db", str(tmp_path / "x.sqlite")])
    assert result.exit_code == 2
    assert "not a loopback address" in result.output and "Traceback" not in result.output


def test_ctl_usage_errors_exit_2(served):
    result = CliRunner().invoke(main, ["ctl", served.addr, "steer", "r1"])
    assert result.exit_code == 2 and "Missing argument 'NOTE'" in result.output


def _serve(*args: str) -> Any:
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "goldfive.cli", "serve", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )


def test_serve_hosts_the_demo_and_still_serves_it_after_a_restart(tmp_path):
    import signal

    addr = f"127.0.0.1:{_free_port()}"
    db = str(tmp_path / "runs.sqlite")
    proc = _serve("demo", "--speed", "20", "--listen", addr, "--db", db)
    try:
        assert "listening on " + addr in proc.stderr.readline()
        assert "live" in proc.stderr.readline()
        (run,) = json.loads(ctl(addr, "--json", "runs").output)
        assert run["state"] in ("RUNNING", "PENDING")
        for _ in range(200):  # until it has a plan (a run stopped before its plan is started again, not resumed)
            if json.loads(ctl(addr, "--json", "runs").output)[0].get("tasks_total"):
                break
            time.sleep(0.05)
        assert ctl(addr, "pause", run["run_id"]).exit_code == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    proc = _serve("--listen", addr, "--db", db)
    try:
        # SIGTERM stopped the hub, not the run: it was left interrupted, and this start
        # continues it from the hub's own record of its launch, paused as it was.
        assert "listening on " + addr in proc.stderr.readline()
        (again,) = json.loads(ctl(addr, "--json", "runs").output)
        assert again["run_id"] == run["run_id"] and again["state"] == "PAUSED"
        status = json.loads(ctl(addr, "--json", "status", run["run_id"]).output)
        assert status["paused"] is True
        assert ctl(addr, "resume", run["run_id"]).exit_code == 0
        import sqlite3

        with sqlite3.connect(db) as conn:
            kinds = [k for (k,) in conn.execute("SELECT kind FROM events WHERE run_id = ?", (run["run_id"],))]
        assert "run_aborted" not in kinds and kinds.count("run_resumed") == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


AGENT = "async def agent(task, session):\n    return f'did {task.id}'\n"
PLAN = {
    "summary": "two steps",
    "tasks": [{"id": "fetch", "title": "Fetch"}, {"id": "report", "title": "Report"}],
    "edges": [{"from_task_id": "fetch", "to_task_id": "report"}],
}


def test_serve_hosts_an_agent_module_function(tmp_path, monkeypatch):
    import signal
    import subprocess
    import sys

    (tmp_path / "myagent.py").write_text(AGENT)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    addr = f"127.0.0.1:{_free_port()}"
    args = ["myagent:agent", "--goal", "fetch and report", "--plan", "plan.json", "--listen", addr, "--db", "runs.sqlite"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "goldfive.cli", "serve", *args], cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    try:
        assert "listening on " + addr in proc.stderr.readline()
        run_id = proc.stderr.readline().split()[1].rstrip(":")
        tail = ctl(addr, "tail", run_id)
        assert tail.exit_code == 0 and "run_completed" in tail.output.strip().splitlines()[-1]
        assert json.loads(ctl(addr, "--json", "status", run_id).output)["summary"]["tasks_completed"] == 2
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["serve", "nosuchmod:agent", "--goal", "g", "--plan", "plan.json"])
    assert result.exit_code == 2 and "nosuchmod" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(main, ["serve", "myagent:agent", "--plan", "plan.json"])
    assert result.exit_code == 2 and "--goal" in result.output


def test_attach_accepts_a_unique_run_id_prefix_as_ctl_does(tmp_path, monkeypatch):
    from goldfive.cli import FRONTENDS

    opened: list[tuple[str, str]] = []
    monkeypatch.setitem(FRONTENDS, "attach", lambda addr, run_id, **kw: opened.append((addr, run_id)) or 0)
    st = ServerThread(tmp_path / "runs.sqlite", run_id="abcd1234")
    try:
        assert ctl(st.addr, "status", "abcd").exit_code == 0
        for short in ("ab", "zz"):  # a run starts "ab", none "zz": too short either way, in the same words
            said = ctl(st.addr, "status", short)
            assert said.exit_code == 2 and f"run id prefix {short!r} is too short: give at least 4 characters" in said.output, said.output
        result = CliRunner().invoke(main, ["attach", st.addr, "--run-id", "abcd"])
        assert result.exit_code == 0, result.output
        assert opened == [(st.addr, "abcd1234")]  # the TUI gets the full id
        result = CliRunner().invoke(main, ["attach", st.addr, "--run-id", "nope"])
        assert result.exit_code == 2
        assert result.output.strip().splitlines() == [f"goldfive attach: error: {st.addr}: NOT_FOUND: unknown run 'nope'"]
    finally:
        st.stop()


def test_ctl_runs_on_an_empty_hub_says_so_on_stderr(tmp_path: Path) -> None:
    """It once printed nothing at all (issue 23, low); stdout stays empty for scripts."""
    with HubThread(tmp_path / "hub.sqlite") as hub:
        result = CliRunner().invoke(main, ["ctl", hub.addr, "runs"], catch_exceptions=False)
        assert result.exit_code == 0
        assert result.stdout == ""
        assert f"no runs on {hub.addr}" in result.stderr and "--archived" in result.stderr


def test_grpc_errors_are_said_in_plain_words_naming_the_address():
    from goldfive.errors import RemoteError

    addr = "hub.example:7531"
    said = {
        ("UNAVAILABLE", "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.1:7531: Connection refused"): "nothing answers at hub.example:7531",
        ("UNAVAILABLE", "Socket closed"): "the connection to hub.example:7531 was lost",
        # a name that does not resolve (the trial: "the connection ... was lost" for a typo)
        ("UNAVAILABLE", "errors resolving hub.example:7531: [field:hostname lookup error:address lookup failed for hub.example:7531: Domain name not found]"): "cannot find the host of hub.example:7531",
        ("UNAVAILABLE", "DNS resolution failed for hub.example:7531: C-ares status is not ARES_SUCCESS qtype=A name=hub.example is_balancer=0: Domain name not found"): "cannot find the host of hub.example:7531",
        ("UNAVAILABLE", "failed to connect: Ssl handshake failed: CERTIFICATE_VERIFY_FAILED"): "the TLS handshake with hub.example:7531 failed",
        ("DEADLINE_EXCEEDED", "Deadline Exceeded"): "hub.example:7531 did not answer in time",
        ("UNAUTHENTICATED", "missing token: send metadata 'authorization: Bearer <token>'"): "hub.example:7531 needs a token",
        ("UNAUTHENTICATED", "wrong token"): "hub.example:7531 refused the token",
    }
    for (code, message), words in said.items():
        text = RemoteError(code, message).in_words(addr)
        assert words in text, text
        assert code not in text and "Bearer" not in text and "failed to connect to all addresses" not in text and "resolving" not in text
    assert RemoteError("NOT_FOUND", "unknown run 'x'").in_words(addr) == "hub.example:7531: NOT_FOUND: unknown run 'x'"
