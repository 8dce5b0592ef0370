"""Write screenshots/phoenix-trace.png: the demo's trace in Arize Phoenix's UI, in headless Chromium.

``python scripts/phoenix_screenshot.py`` (the test extra brings arize-phoenix and Playwright;
Debian's chromium: scripts/system-deps.sh). Phoenix is started on loopback, the demo runs with
``--otel`` against it, the trace is opened in Phoenix and captured.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.otel.phoenix_server import Phoenix  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


async def shoot(url: str, out: Path) -> None:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = await browser.new_page(viewport={"width": 1440, "height": 900})
        await page.goto(f"{url}/projects")
        await page.wait_for_timeout(3000)
        links = await page.eval_on_selector_all("a", "els => els.map(e => e.href)")
        project = next(link for link in links if "/projects/" in link)
        await page.goto(project)
        await page.wait_for_timeout(4000)
        await page.click("tbody tr")  # the trace
        await page.wait_for_timeout(4000)
        await page.screenshot(path=str(out))
        await browser.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        phoenix = Phoenix(Path(work)).start()
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
            env.update(OTEL_EXPORTER_OTLP_ENDPOINT=phoenix.url, GOLDFIVE_DATA_DIR=work)
            subprocess.run([sys.executable, "-m", "goldfive.cli", "demo", "--headless", "--otel", "--speed", "4"],
                           env=env, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)  # fmt: skip
            out = ROOT / "screenshots" / "phoenix-trace.png"
            asyncio.run(shoot(phoenix.url, out))
            print(f"wrote {out} (phoenix answered after {phoenix.start_s:.1f}s)")
        finally:
            phoenix.stop()


if __name__ == "__main__":
    main()
