"""Write the README screenshots: ``python scripts/screenshots.py [--out screenshots]``.

Each picture is the TUI at 120x40 on the scripted slide-deck story (``tui.scenario``), with
a fixed clock and no cursor blink, so the same code gives the same pictures. SVGs always;
PNGs too when ``rsvg-convert`` is on PATH.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.pilot import Pilot  # noqa: E402

from tui.app import GoldfiveApp  # noqa: E402
from tui.scenario import DemoScript, story_source  # noqa: E402
from tui.source import ScriptedSource  # noqa: E402

SIZE = (120, 40)
NOTE = "focus on fewer, higher-quality slides"
#: PNGs at 3/4 scale: still readable, and the committed pictures stay well under 2 MB.
PNG_ZOOM = 0.75


@dataclass(frozen=True)
class Shot:
    name: str
    what: str
    stage: str  # how far the story has run: opening, approval or finished
    keys: tuple[str, ...] = ()


SHOTS = (
    Shot("running", "a run in progress: plan, live event log, approvals", "opening"),
    Shot("paused", "after p: PAUSE acked, the footer offers Resume", "opening", ("p",)),
    Shot("steer-input", "s opens the steer input", "opening", ("s", *NOTE)),
    Shot("steered", "after the steer: plan revision 1 with the new task (+r1)", "opening", ("s", *NOTE, "enter")),
    Shot("approval", "publish_deck waits for approval (a approves, x rejects)", "approval", ("tab", "tab")),
    Shot("help", "? lists every key", "opening", ("question_mark",)),
)


def build(stage: str) -> tuple[GoldfiveApp, ScriptedSource]:
    source = story_source(DemoScript(), stage)
    return GoldfiveApp(source, clock=None, cursor_blink=False), source


async def settle(app: GoldfiveApp, source: ScriptedSource, pilot: Pilot) -> None:
    """Every released event applied and the screen repainted."""
    await pilot.pause()
    await source.wait_idle()
    await pilot.pause()
    app._repaint()
    await pilot.pause()


async def take(shot: Shot, out: Path) -> Path:
    app, source = build(shot.stage)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, source, pilot)
        for key in shot.keys:
            await pilot.press(key)
            await settle(app, source, pilot)
        path = app.save_screenshot(f"{shot.name}.svg", str(out))
    return Path(path)


def to_png(svg: Path) -> Path | None:
    if shutil.which("rsvg-convert") is None:
        return None
    png = svg.with_suffix(".png")
    subprocess.run(["rsvg-convert", "--zoom", str(PNG_ZOOM), "-o", str(png), str(svg)], check=True)
    return png


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for shot in SHOTS:
        svg = await take(shot, out)
        png = to_png(svg)
        made = ", ".join(str(p) for p in (svg, png) if p is not None)
        print(f"{shot.name:12} {made}  ({shot.what})")
    if shutil.which("rsvg-convert") is None:
        print("rsvg-convert is not on PATH: SVGs only", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"), help="directory for the pictures")
    asyncio.run(main(parser.parse_args().out))
