"""Try the TUI without a runtime: ``python scripts/preview.py [--speed X]``.

Plays the scripted slide-deck story over a few seconds and reacts to the keys the way the
runtime would: PAUSE holds the story, STEER revises the plan, the publish step waits for
APPROVE / REJECT, CANCEL aborts. For looking at the screen, not for testing the runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage  # noqa: E402
from goldfive.pb.goldfive.v1.events_pb2 import Event  # noqa: E402
from goldfive_tui.app import GoldfiveApp  # noqa: E402
from goldfive_tui.run.screen import RunScreen  # noqa: E402
from tests.tui.scenario import DemoScript  # noqa: E402
from tests.tui.scripted import ScriptedSource  # noqa: E402


class PacedDemoSource(ScriptedSource):
    def __init__(self, speed: float = 1.0) -> None:
        self.script = DemoScript()
        super().__init__([], live=True, title="preview", react=self._react, clock=self.script.clock)
        self.speed = max(0.1, speed)
        self._running = asyncio.Event()
        self._running.set()
        self._answered = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.steered = False
        self.over = False

    def _react(self, msg: ControlMessage, ack: ControlAck) -> list[Event]:
        if self.over:
            return []
        events = self.script.control(msg, ack.result, ack.detail)
        if ack.result != AckResult.SUCCESS:
            return events
        if msg.kind == ControlKind.PAUSE:
            self._running.clear()
        elif msg.kind in (ControlKind.RESUME, ControlKind.STEER, ControlKind.REWIND_TO):
            self._running.set()
            self.steered = self.steered or msg.kind == ControlKind.STEER
        elif msg.kind in (ControlKind.APPROVE, ControlKind.REJECT):
            self._answered.set()
        elif msg.kind == ControlKind.CANCEL:
            self.over = True
            self._running.set()
            self._answered.set()
        return events

    async def _play(self, events: list[Event], *, gap_s: float = 0.6) -> None:
        for ev in events:
            if self.over:
                return
            await self._running.wait()
            await asyncio.sleep(gap_s / self.speed)
            self.release([ev])

    async def _story(self) -> None:
        await self._play(self.script.opening())
        await asyncio.sleep(4 / self.speed)  # time to press s and steer
        await self._running.wait()
        if self.over:
            return
        await self._play(self.script.to_approval(task="draft_focused" if self.steered else "draft"))
        await self._answered.wait()
        if not self.over:
            await self._play(self.script.finish())

    async def start(self) -> None:
        await super().start()
        self._task = asyncio.create_task(self._story())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await super().stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", type=float, default=1.0, help="story speed multiplier")
    args = parser.parse_args()
    GoldfiveApp(RunScreen(PacedDemoSource(args.speed))).run()


if __name__ == "__main__":
    main()
