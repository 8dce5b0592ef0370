"""goldfive web: the TUI served to a real headless browser (Debian's Chromium, driven by Playwright).

The browser opens the URL the server printed (with the start's token), is redirected to the
same page without it, the plan shows, pressing ``p`` pauses the run and the ack appears: read
from the terminal output the browser received (ANSI stripped) and from the run's own recording.
Chromium comes from the system's packages (``scripts/system-deps.sh``, which the README's test
command runs). Origin, Host, cookie and framing rules: tests/remote/test_web_security.py.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.web_kit import ANSI, CHROMIUM, CHROMIUM_ARGS, WebProcess, acked_pause, free_port


def test_browser_sees_the_plan_and_p_pauses_the_run(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    assert os.path.exists(CHROMIUM), f"{CHROMIUM} is missing: the README's test command installs it (scripts/system-deps.sh)"

    port = free_port()
    web = WebProcess(["--listen", f"127.0.0.1:{port}", "demo", "--speed", "0.5"], tmp_path)
    frames: list[bytes] = []
    seen: dict[str, str] = {}

    def screen() -> str:
        return ANSI.sub(b"", b"".join(frames)).decode("utf-8", "replace")

    async def drive(url: str) -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 800})
                page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(f if isinstance(f, bytes) else f.encode())))
                await page.goto(url)
                seen["url"] = page.url
                seen["document.cookie"] = await page.evaluate("document.cookie")
                for _ in range(200):
                    if "Research Python" in screen() and "Plan" in screen():
                        break
                    await asyncio.sleep(0.1)
                assert "Research Python" in screen(), "the plan never reached the browser"
                await page.click("#terminal")
                await page.keyboard.press("p")
                for _ in range(200):
                    if "PAUSED" in screen() and acked_pause(web.db):
                        break
                    await asyncio.sleep(0.1)
                await page.screenshot(path=str(tmp_path / "web.png"))
            finally:
                await browser.close()

    try:
        start = web.start_url()
        asyncio.run(drive(start.group(0)))
    finally:
        web.stop()
    assert seen["url"] == f"http://127.0.0.1:{port}/", "after the redirect the URL bar holds no token"
    assert seen["document.cookie"] == "", "the cookie is HttpOnly: the page's scripts cannot read it"
    assert "PAUSED" in screen(), "the browser never showed the run paused"
    assert "SUCCESS" in screen(), "the PAUSE ack never reached the browser"
    assert acked_pause(web.db), "the run did not record an acked PAUSE"
    assert (tmp_path / "web.png").stat().st_size > 10_000


def test_at_a_phone_viewport_the_run_screen_is_one_column_and_the_footer_keys_show_untapped(tmp_path: Path) -> None:
    """Issue 23 (web on a phone): at 390x844 the page's terminal is under 60 columns and the
    run screen one column, plan, then approvals, then events; the footer's keys show from the
    first paint, before the page is tapped (Textual's web driver starts the app blurred)."""
    import json

    from playwright.async_api import async_playwright

    from tests.web_kit import terminal_rows

    assert os.path.exists(CHROMIUM), f"{CHROMIUM} is missing: the README's test command installs it (scripts/system-deps.sh)"
    web = WebProcess(["--listen", f"127.0.0.1:{free_port()}", "demo", "--speed", "4"], tmp_path)
    frames: list[bytes] = []
    size: list[tuple[int, int]] = []
    shown: list[str] = []

    def on_sent(frame: str | bytes) -> None:
        if isinstance(frame, str) and frame.startswith('["resize"'):
            said = json.loads(frame)[1]
            size.append((said["width"], said["height"]))

    def screen() -> list[str]:
        return terminal_rows(frames, *size[-1]) if size else []

    def ready(rows: list[str]) -> bool:
        text = "\n".join(rows)
        return "Approvals (1)" in text and "q Quit" in text and "task_started" in text

    async def drive(url: str) -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                # Scale 1: at Chromium's phone default of 2 the screenshot is twice the size.
                context = await browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1, is_mobile=True, has_touch=True)
                page = await context.new_page()

                def on_socket(ws) -> None:  # type: ignore[no-untyped-def]
                    ws.on("framereceived", lambda f: frames.append(f if isinstance(f, bytes) else f.encode()))
                    ws.on("framesent", on_sent)

                page.on("websocket", on_socket)
                await page.goto(url)  # never tapped or clicked: the app has no focus
                for _ in range(300):
                    if ready(screen()):
                        break
                    await asyncio.sleep(0.1)
                shown.extend(screen())
                await page.screenshot(path=str(tmp_path / "web-phone.png"))
            finally:
                await browser.close()

    try:
        asyncio.run(drive(web.start_url().group(0)))
    finally:
        web.stop()
    width = size[-1][0]
    assert width < 60, f"the page's terminal is {width} columns at a phone's width"
    text = "\n".join(shown)
    assert ready(shown), text
    tops = {name: next(i for i, row in enumerate(shown) if row.startswith(f"╭─ {name}")) for name in ("Plan", "Approvals (1)", "Events")}
    assert tops["Plan"] < tops["Approvals (1)"] < tops["Events"], text  # one column, in that order
    assert all(shown[i].rstrip().endswith("╮") and len(shown[i].rstrip()) == width for i in tops.values()), text  # each the full width
    footer = " ".join(shown[-3:])
    for key in ("p Pause", "s Steer", "a Approve", "x Reject", "c Cancel", "? Help", "q Quit"):
        assert key in footer, text
    assert (tmp_path / "web-phone.png").stat().st_size > 10_000


def test_non_loopback_refuses_a_short_token(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "goldfive_tui.cli", "web", "--listen", "0.0.0.0:8765", "--token", "short", "demo"],
        capture_output=True, text=True, timeout=30,
    )
    assert out.returncode == 2
    assert "token" in out.stderr and "16" in out.stderr and "Traceback" not in out.stderr


def test_a_given_token_is_required_and_becomes_a_cookie(tmp_path: Path) -> None:
    port = free_port()
    token = "t" * 24
    web = WebProcess(["--listen", f"0.0.0.0:{port}", "--token", token, "demo"], tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        denied = web.wait_http(f"{base}/", expect=401)
        assert "printed" in denied.text and denied.headers["content-type"].startswith("text/html")
        assert httpx.get(f"{base}/?token=wrong", timeout=5).status_code == 401
        first = httpx.get(f"{base}/?token={token}", timeout=5)
        assert first.status_code == 303 and first.headers["location"] == "/"
        name = f"goldfive_web_{port}"
        cookie = first.cookies.get(name)
        assert cookie and token not in cookie, "the cookie is named after the port and is not the token"
        flags = first.headers["set-cookie"].lower()
        assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags
        ok = httpx.get(f"{base}/", headers={"Cookie": f"{name}={cookie}"}, timeout=5)
        assert ok.status_code == 200 and "goldfive demo" in ok.text
        static = httpx.get(f"{base}/static/js/textual.js", headers={"Cookie": f"{name}={cookie}"}, timeout=5)
        assert static.status_code == 200
        assert httpx.get(f"{base}/static/js/textual.js", timeout=5).status_code == 401
    finally:
        web.stop()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "give the command"),
        (["ctl"], "cannot serve 'ctl'"),
        (["demo", "--headless"], "--headless"),
        (["--listen", "127.0.0.1:65536", "demo"], "out of range"),
        (["--token", "a b c", "demo"], "whitespace"),
        (["--token", "x" * 20, "--token-file", "/dev/null", "demo"], "not both"),
        (["--allow-host", "a b", "demo"], "--allow-host 'a b' is not a host name"),
    ],
)
def test_bad_invocations_are_one_line(args: list[str], needle: str) -> None:
    out = subprocess.run([sys.executable, "-m", "goldfive_tui.cli", "web", *args], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert needle in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("content", "needle"),
    [(None, "cannot read the token file"), ("", "is empty"), ("  \n\n", "is empty"), ("one\ntwo\n", "whitespace"), (b"\xff\xfe", "not text")],
)
def test_a_bad_token_file_is_one_line(tmp_path: Path, content: str | bytes | None, needle: str) -> None:
    path = tmp_path / "token"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    out = subprocess.run(
        [sys.executable, "-m", "goldfive_tui.cli", "web", "--token-file", str(path), "demo"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 2, out.stderr
    error = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and needle in error[0] and str(path) in error[0], out.stderr
    assert "Traceback" not in out.stderr


def test_a_port_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "goldfive_tui.cli", "web", "--listen", f"127.0.0.1:{port}", "demo"], capture_output=True, text=True, timeout=30
        )
    assert out.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr and "in use" in out.stderr and "Traceback" not in out.stderr


def test_without_the_web_extra_it_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import goldfive_tui.cli as tui_cli
    from goldfive.remote.web_access import WebAccess

    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    monkeypatch.delitem(sys.modules, "goldfive_tui.web", raising=False)
    with socket.socket() as sock:
        assert tui_cli.open_web(["demo"], access=WebAccess.start("127.0.0.1", 8765), sock=sock) == 2
    err = capsys.readouterr().err
    assert "pip install 'goldfive[web]'" in err and err.count("\n") == 1


def test_a_command_that_cannot_start_shows_its_error_on_the_page(tmp_path: Path) -> None:
    """A tab whose command fails at start once left the browser on the splash screen forever."""
    from playwright.async_api import async_playwright

    port = free_port()
    missing = tmp_path / "no-such-recording.jsonl"
    web = WebProcess(["--listen", f"127.0.0.1:{port}", "replay", str(missing)], tmp_path)
    frames: list[bytes] = []

    def screen() -> str:
        return ANSI.sub(b"", b"".join(frames)).decode("utf-8", "replace")

    async def drive(url: str) -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 800})
                page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(f if isinstance(f, bytes) else f.encode())))
                await page.goto(url)
                for _ in range(200):
                    if "could not start" in screen() and "no-such-recording" in screen():
                        break
                    await asyncio.sleep(0.1)
                await page.screenshot(path=str(tmp_path / "web-error.png"))
            finally:
                await browser.close()

    try:
        asyncio.run(drive(web.start_url().group(0)))
    finally:
        web.stop()
    assert "could not start" in screen(), "the page never showed the error"
    assert "no-such-recording" in screen() and "Traceback" not in screen()


def test_web_with_the_commands_help_prints_it_and_serves_nothing() -> None:
    out = subprocess.run([sys.executable, "-m", "goldfive_tui.cli", "web", "demo", "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "Run the slide-deck demo" in out.stdout and "serving" not in out.stdout + out.stderr
