"""goldfive web: the TUI served to a real headless browser (Debian's Chromium, driven by Playwright).

The page loads, the plan shows, pressing ``p`` pauses the run and the ack appears: read from the
terminal output the browser received (ANSI stripped) and from the run's own recording. Chromium
comes from the system's packages (``scripts/system-deps.sh``, which the README's test command runs).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

CHROMIUM = "/usr/bin/chromium"
#: As root in a closed network: no sandbox, no background connections (they are refused anyway).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_web(args: list[str], tmp_path: Path) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "goldfive_tui.cli", "web", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    return proc, env


def _wait_http(url: str, proc: subprocess.Popen[bytes], expect: int = 200) -> httpx.Response:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"goldfive web exited {proc.returncode}: {proc.stdout.read().decode() if proc.stdout else ''}")
        try:
            r = httpx.get(url, timeout=2)
            if r.status_code == expect:
                return r
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer {expect} within 30 s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    try:  # the tab's app process is in the same session; nothing may outlive the test
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _acked_pause(db: Path) -> bool:
    from goldfive.recording import open_recording

    if not db.exists():
        return False
    rec = open_recording(db)
    for ev in rec.events:
        if ev.WhichOneof("payload") == "control_acked" and ev.control_acked.kind == "PAUSE":
            return ev.control_acked.ack.result == 1
    return False


def test_browser_sees_the_plan_and_p_pauses_the_run(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    assert os.path.exists(CHROMIUM), f"{CHROMIUM} is missing: the README's test command installs it (scripts/system-deps.sh)"

    port = _free_port()
    proc, _ = _start_web(["--listen", f"127.0.0.1:{port}", "demo", "--speed", "0.5"], tmp_path)
    frames: list[bytes] = []

    def screen() -> str:
        return _ANSI.sub(b"", b"".join(frames)).decode("utf-8", "replace")

    async def drive() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 800})
                page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(f if isinstance(f, bytes) else f.encode())))
                await page.goto(f"http://127.0.0.1:{port}/")
                for _ in range(200):
                    if "Research Python" in screen() and "Plan" in screen():
                        break
                    await asyncio.sleep(0.1)
                assert "Research Python" in screen(), "the plan never reached the browser"
                await page.click("#terminal")
                await page.keyboard.press("p")
                for _ in range(200):
                    if "PAUSED" in screen() and _acked_pause(tmp_path / "data" / "goldfive" / "runs.sqlite"):
                        break
                    await asyncio.sleep(0.1)
                await page.screenshot(path=str(tmp_path / "web.png"))
            finally:
                await browser.close()

    try:
        _wait_http(f"http://127.0.0.1:{port}/", proc)
        asyncio.run(drive())
    finally:
        _stop(proc)
    assert "PAUSED" in screen(), "the browser never showed the run paused"
    assert "SUCCESS" in screen(), "the PAUSE ack never reached the browser"
    assert _acked_pause(tmp_path / "data" / "goldfive" / "runs.sqlite"), "the run did not record an acked PAUSE"
    assert (tmp_path / "web.png").stat().st_size > 10_000


def test_non_loopback_needs_a_long_token(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "goldfive_tui.cli", "web", "--listen", "0.0.0.0:8765", "demo"],
        capture_output=True, text=True, timeout=30,
    )
    assert out.returncode == 2
    assert "token" in out.stderr and "Traceback" not in out.stderr


def test_token_is_required_on_every_request_and_set_as_a_cookie(tmp_path: Path) -> None:
    port = _free_port()
    token = "t" * 24
    proc, _ = _start_web(["--listen", f"0.0.0.0:{port}", "--token", token, "demo"], tmp_path)
    try:
        denied = _wait_http(f"http://127.0.0.1:{port}/", proc, expect=401)
        assert "token" in denied.text
        assert httpx.get(f"http://127.0.0.1:{port}/?token=wrong", timeout=5).status_code == 401
        ok = httpx.get(f"http://127.0.0.1:{port}/?token={token}", timeout=5)
        assert ok.status_code == 200 and "goldfive demo" in ok.text
        cookie = ok.cookies.get("goldfive_web_token")
        assert cookie == token
        assert "httponly" in ok.headers["set-cookie"].lower()
        static = httpx.get(f"http://127.0.0.1:{port}/static/js/textual.js", cookies={"goldfive_web_token": token}, timeout=5)
        assert static.status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/static/js/textual.js", timeout=5).status_code == 401
    finally:
        _stop(proc)


@pytest.mark.parametrize(
    ("args", "needle"),
    [([], "give the command"), (["ctl"], "cannot serve 'ctl'"), (["demo", "--headless"], "--headless"), (["--listen", "127.0.0.1:0", "demo"], "out of range")],
)
def test_bad_invocations_are_one_line(args: list[str], needle: str) -> None:
    out = subprocess.run([sys.executable, "-m", "goldfive_tui.cli", "web", *args], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert needle in out.stderr and "Traceback" not in out.stderr


def test_without_the_web_extra_it_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import goldfive_tui.cli as tui_cli

    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    monkeypatch.delitem(sys.modules, "goldfive_tui.web", raising=False)
    assert tui_cli.open_web(["demo"], host="127.0.0.1", port=8765) == 2
    err = capsys.readouterr().err
    assert "pip install 'goldfive[web]'" in err and err.count("\n") == 1
