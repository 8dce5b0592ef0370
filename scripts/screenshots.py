"""Write the screenshots of the README and docs/tour.md: ``python scripts/screenshots.py [--out screenshots]``.

Each picture is the TUI at 120x40 on the real demo (``goldfive demo``: the LLM planner and
agent answered by the offline ScriptedModel), driven key by key the way a person would. The
run's clock is a counter that moves 250 ms per reading and the app reads the same clock, so
times in the pictures do not depend on the machine. SVGs always; PNGs too, drawn by
``rsvg-convert`` when it is on PATH, else by Debian's Chromium.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.pilot import Pilot  # noqa: E402

from goldfive.control import ControlChannel  # noqa: E402
from goldfive.demo import DEMO_GOAL, make_demo_runner  # noqa: E402
from goldfive.view import RunPhase  # noqa: E402
from goldfive_tui.app import GoldfiveApp  # noqa: E402
from goldfive_tui.local_source import LocalRunSource  # noqa: E402
from goldfive_tui.run.screen import RunScreen  # noqa: E402

SIZE = (120, 40)
NOTE = "only 3 slides, fewer words"
#: PNGs at 3/4 scale: still readable, and the committed pictures stay well under 2 MB.
PNG_ZOOM = 0.75
#: The demo's pace: answers come every ~0.3 s, so a picture taken when its moment arrives is
#: taken well before the next event.
SPEED = 4.0
T0_MS = 1_767_225_600_000


class StepClock:
    """Moves 250 ms each time the run reads it; ``peek`` (the app's clock) does not move it."""

    def __init__(self) -> None:
        self.now = T0_MS

    def __call__(self) -> int:
        self.now += 250
        return self.now

    def peek(self) -> int:
        return self.now


Moment = Callable[[RunScreen], bool]


def drafting(screen: RunScreen) -> bool:
    draft = screen.state.tasks.get("draft")
    return draft is not None and bool(draft.progress) and screen.state.tasks["outline"].result != ""


def researched(screen: RunScreen) -> bool:
    research = screen.state.tasks.get("research")
    return research is not None and research.result != ""


def approval(screen: RunScreen) -> bool:
    return bool(screen.state.approvals)


def finished(screen: RunScreen) -> bool:
    return bool(screen.state.finished)


def paused(screen: RunScreen) -> bool:
    return screen.state.phase in (RunPhase.PAUSING, RunPhase.PAUSED) and all(c.acked for c in screen.state.controls.values())


def steered(screen: RunScreen) -> bool:
    return any(t.added_revision == 1 and t.progress for t in screen.state.tasks.values())


@dataclass(frozen=True)
class Shot:
    name: str
    what: str
    steps: tuple[tuple[Moment | None, tuple[str, ...]], ...]  # wait for the moment, then press the keys


SHOTS = (
    Shot("running", "the demo running: the plan, the live event log, the selected task", ((drafting, ()),)),
    Shot("paused", "after p: the PAUSE line with its ack; the header says PAUSING", ((drafting, ("p",)), (paused, ()))),
    Shot("steer-input", "s opens the steer input", ((researched, ("s", *NOTE)),)),
    Shot("steered", "after the steer: plan revision 1 (+r1 tasks named after the note)", ((researched, ("s", *NOTE)), (drafting, ("ctrl+s",)), (steered, ()))),
    Shot("approval", "Enter on the waiting publish_deck approval: prompt, task, age, every argument; a / x answer it", ((approval, ("tab", "tab", "tab", "enter")),)),
    Shot("rejected", "after x (the approval opens, x again, a reason): the run completes, with the rejected call on its task and in the summary", ((approval, ("x", "x", *"not this week", "enter")), (finished, ("end",)))),
    Shot("help", "? lists every key", ((drafting, ("question_mark",)),)),
)


async def wait_for(screen: RunScreen, pilot: Pilot, moment: Moment, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not moment(screen):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the demo never reached {moment.__name__}")
        await asyncio.sleep(0.01)
    await pilot.pause()
    screen.repaint()
    await pilot.pause()


def build() -> tuple[GoldfiveApp, RunScreen]:
    clock = StepClock()

    def factory(sinks: list[object], channel: ControlChannel):  # type: ignore[no-untyped-def]
        runner = make_demo_runner(sinks=sinks, control=channel, speed=SPEED, run_id="3f9c2a7b41d04e5f", clock=clock)
        return runner, DEMO_GOAL

    screen = RunScreen(LocalRunSource(factory), clock=clock.peek)
    return GoldfiveApp(screen, cursor_blink=False), screen


def plain_spaces(svg: Path) -> None:
    """Textual writes spaces as &#160;, which rsvg (and some viewers) draw with no width at
    the start of a span: "● research" came out "●research". Plain spaces, preserved, do not."""
    text = svg.read_text()
    text = text.replace("&#160;", " ")
    text = re.sub(r"<svg ", '<svg xml:space="preserve" ', text, count=1)
    svg.write_text(text)


async def take(shot: Shot, out: Path) -> Path:
    app, screen = build()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        for moment, keys in shot.steps:
            if moment is not None:
                await wait_for(screen, pilot, moment)
            for key in keys:
                await pilot.press(key)
            await pilot.pause()
        if shot.name != "approval":  # the "Approval needed" toast would hide the log
            app.clear_notifications()
        screen.repaint()
        await pilot.pause()
        path = Path(app.save_screenshot(f"{shot.name}.svg", str(out)))
    plain_spaces(path)
    return path


CHROMIUM = Path("/usr/bin/chromium")


def to_png(svg: Path) -> Path | None:
    """The PNG beside ``svg``: with rsvg-convert, else with Debian's Chromium through
    Playwright (both in the test extra / scripts/system-deps.sh); None with neither."""
    png = svg.with_suffix(".png")
    if shutil.which("rsvg-convert") is not None:
        subprocess.run(["rsvg-convert", "--zoom", str(PNG_ZOOM), "-o", str(png), str(svg)], check=True)
        return png
    if not CHROMIUM.exists():
        return None
    from playwright.sync_api import sync_playwright

    text = svg.read_text()
    box = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', text)
    if box is None:
        return None
    width, height = int(float(box.group(1)) * PNG_ZOOM), int(float(box.group(2)) * PNG_ZOOM)
    sized = text.replace("<svg ", f'<svg width="{width}" height="{height}" ', 1)
    # Chromium ignores xml:space: the spaces the terminal drew are kept by CSS instead.
    sized = re.sub(r"(<svg[^>]*>)", r"\1<style>text { white-space: pre; }</style>", sized, count=1)
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / svg.name
        page_file.write_text(sized)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(page_file.as_uri())
            page.wait_for_timeout(300)  # the web font's fallback settles
            page.screenshot(path=str(png))
            browser.close()
    return png


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for shot in SHOTS:
        svg = await take(shot, out)
        png = await asyncio.to_thread(to_png, svg)  # the sync Playwright API cannot run on the loop
        made = ", ".join(str(p) for p in (svg, png) if p is not None)
        print(f"{shot.name:12} {made}  ({shot.what})")
    if shutil.which("rsvg-convert") is None and not CHROMIUM.exists():
        print("neither rsvg-convert nor Chromium is here: SVGs only", file=sys.stderr)


if __name__ == "__main__":
    import os

    os.environ["LOGNAME"] = "ada"  # who sends the controls (getpass reads LOGNAME first): one name on every machine
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"), help="directory for the pictures")
    asyncio.run(main(parser.parse_args().out))
