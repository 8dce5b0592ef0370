"""Terminal escapes a hostile runner could put in its text, and the check that printed output
holds none of them. Shared by the CLI, TUI and chaos tests."""

from __future__ import annotations

import asyncio
import random
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from goldfive import events
from goldfive.pb.goldfive.v1 import service_pb2_grpc
from goldfive.remote import RemoteServer, RunHost, start_server
from goldfive.types import Plan, Session, Task
from tests.hub.drive import CallDriver

#: Each is something a terminal would obey: clipboard write, window title, clear screen (7-bit
#: and 8-bit CSI), a DCS string, a reset, a bell, a carriage return that rewrites the line.
ESCAPES = {
    "osc52": "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "osc0": "\x1b]0;PWNED TITLE\x1b\\",
    "csi2j": "\x1b[2J\x1b[H",
    "c1csi": "\x9b2J",
    "c1osc": "\x9d0;C1 TITLE\x9c",
    "dcs": "\x1bP+q544e\x1b\\",
    "ris": "\x1bc",
    "bel_del_cr": "\x07\x7f\rOVERWRITTEN",
    "unterminated": "\x1b]8;;http://evil.example/",
}

#: What may not reach a terminal from a runner: C0 but newline and tab, DEL, C1.
FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def laden(text: str) -> str:
    """``text`` with every escape of :data:`ESCAPES` woven in."""
    return text + "".join(f" {name} {seq}" for name, seq in ESCAPES.items()) + " end"


def random_laden(rng: random.Random, length: int = 40) -> str:
    """A random string of printable text, control characters and escape sequences."""
    parts: list[str] = []
    for _ in range(length):
        pick = rng.random()
        if pick < 0.4:
            parts.append(rng.choice("abc xyz/:;[]0123"))
        elif pick < 0.6:
            parts.append(rng.choice(list(ESCAPES.values())))
        elif pick < 0.8:
            parts.append(chr(rng.choice([*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)])))
        else:
            parts.append(rng.choice(["\x1b", "\x1b[", "\x1b]", "\x9b", "\x9d", "é", "漢", "\u202e", "\n", "\t"]))
    return "".join(parts)


def forbidden_in(output: str) -> list[str]:
    """The forbidden characters found in ``output``, with what surrounds them (for messages)."""
    return [repr(output[max(0, m.start() - 12) : m.end() + 12]) for m in FORBIDDEN.finditer(output)]


class HostileHub:
    """A hub (on its own loop, in a thread: CliRunner runs asyncio itself) with two runs
    connected over Hub.Connect by hand, as a hostile runner would: ``open-run`` waits for an
    approval, ``done-run`` has completed; each text of theirs is ``text(what)``."""

    def __init__(self, db: Path, text: Callable[[str], str]) -> None:
        self.text = text
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server: RemoteServer = self.call(start_server(RunHost(db), listen="127.0.0.1:0"))
        self.lanes: list[Any] = []
        for run_id, finish in (("open-run", False), ("done-run", True)):
            self.call(self._connect(run_id, finish))

    def call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(20)

    async def _connect(self, run_id: str, finish: bool) -> None:
        lane = CallDriver()
        channel = grpc.aio.insecure_channel(self.server.address)
        lane.call = service_pb2_grpc.HubStub(channel).Connect()
        self.lanes.append((lane, channel))
        await lane.hello(run_id)
        s = Session(run_id=run_id)
        t = self.text
        evs = [
            events.run_started(s, goal_summary=t("goal")),
            events.plan_submitted(s, Plan(tasks=[Task("t1", t("title")), Task("t2", t("text"))], id="p")),
            events.task_started(s, "t1"),
            events.task_progress(s, "t1", detail=t("text")),
            events.approval_requested(
                s, target_id="approve-me", kind="tool", prompt=t("prompt"), task_id="t1", tool_name="publish", args={"path": t("arg")}
            ),
        ]
        if finish:
            evs += [events.task_completed(s, "t1", t("text")), events.run_completed(s, t("outcome"))]
        for i, ev in enumerate(evs):
            ev.sequence = i
        await lane.send(evs)
        await lane.read_until("confirmed_sequence")

    def stop(self) -> None:
        async def close() -> None:
            for lane, channel in self.lanes:
                lane.call.cancel()
                await channel.close()
            await self.server.stop(None)

        self.call(close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
