"""Write screenshots/web.png: ``goldfive web demo`` in headless Chromium, after ``p`` paused it.

``python scripts/web_screenshot.py`` (needs Debian's chromium: scripts/system-deps.sh).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


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


def main() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, XDG_DATA_HOME=data)
        proc = subprocess.Popen([sys.executable, "-m", "goldfive_tui.cli", "web", "--listen", f"127.0.0.1:{port}", "demo"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            for _ in range(100):
                try:
                    httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
            out = ROOT / "screenshots" / "web.png"
            asyncio.run(shoot(f"http://127.0.0.1:{port}/", out))
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
