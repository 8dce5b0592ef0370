"""Write screenshots/web.png: ``goldfive web demo`` in headless Chromium, after ``p`` paused it.

``python scripts/web_screenshot.py`` (needs Debian's chromium: scripts/system-deps.sh).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: The URL goldfive web prints on start, with the start's token.
START_URL = re.compile(rb"http://\S+/\?token=\S+")


async def shoot(url: str, out: Path) -> None:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        await page.goto(url)
        await page.wait_for_timeout(4000)  # the demo has done its first tasks
        await page.click("#terminal")
        await page.keyboard.press("p")
        await page.wait_for_timeout(1500)
        await page.screenshot(path=str(out))
        await browser.close()


def start_url(proc: subprocess.Popen[bytes]) -> str:
    """The URL the server prints once it listens (it reads stdout line by line until then)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        found = START_URL.search(line)
        if found:
            # keep reading what it prints (its access log), so a full pipe never stalls it
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return found.group(0).decode()
    raise SystemExit("goldfive web printed no URL")


def main() -> None:
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, XDG_DATA_HOME=data)
        env.pop("GOLDFIVE_WEB_TOKEN", None)  # a random token, printed in the URL
        proc = subprocess.Popen([sys.executable, "-m", "goldfive_tui.cli", "web", "--listen", "127.0.0.1:0", "demo"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            out = ROOT / "screenshots" / "web.png"
            asyncio.run(shoot(start_url(proc), out))
            print(f"wrote {out}")
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(1)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


if __name__ == "__main__":
    main()
