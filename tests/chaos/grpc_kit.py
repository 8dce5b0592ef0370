"""Pieces of the gRPC chaos tests: a host with a few gated runs, random requests, and the
judgement of a status (never UNKNOWN, never a Python exception's name in the detail)."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from goldfive.pb.goldfive.v1 import control_pb2, service_pb2
from goldfive.remote import RemoteServer, RunHost, start_server
from goldfive.runner import Runner
from goldfive.types import Plan, Session, Task, TaskEdge
from tests.runtime_kit import ReplanningPlanner

#: Run ids hosted by the fuzz server: two share the prefix "abcd" (ambiguous), one does not.
RUN_IDS = ("abcd1111aaaa", "abcd2222bbbb", "zzzz9999cccc")

#: A Python exception class name, or a traceback, in a status detail.
LEAK = re.compile(r"Traceback|\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b|\bFile \"")


def leaks_python(detail: str) -> bool:
    return bool(LEAK.search(detail or ""))


class Gate:
    """The hosted runs' agents wait on ``opened`` at every task, with a random short delay."""

    def __init__(self, rng: random.Random) -> None:
        self.opened = asyncio.Event()
        self.rng = rng

    def factory(self, n_tasks: int = 4) -> Callable[..., Runner]:
        ids = [f"t{i}" for i in range(1, n_tasks + 1)]
        plan = Plan(tasks=[Task(i, i.upper()) for i in ids], edges=[TaskEdge(a, b) for a, b in zip(ids, ids[1:])], id="p1")

        async def agent(task: Task, session: Session) -> str:
            await asyncio.sleep(self.rng.choice([0, 0.001, 0.005]))
            await self.opened.wait()
            return f"did {task.id}"

        def make(*, sinks: Any, control: Any, run_id: str | None = None) -> Runner:
            return Runner(agent=agent, planner=ReplanningPlanner(plan), sinks=sinks, control=control, run_id=run_id)

        return make


async def serve_runs(db: Path, gate: Gate) -> RemoteServer:
    host = RunHost(db)
    server = await start_server(host, listen="127.0.0.1:0", ack_timeout=5.0)
    for run_id in RUN_IDS:
        host.start_run(gate.factory(), f"fuzz {run_id}", run_id=run_id)
    return server


def random_run_id(rng: random.Random) -> str:
    return rng.choice(
        [*RUN_IDS, *RUN_IDS, "abcd", "abcd1", "zzzz", "zzz", "", "nope", "a" * 2000, "ünï", "abcd1111aaaa\x00", " "]
    )


_EXTRA_JSON = [
    "",
    '{"x": 1}',
    "{not json",
    "[]",
    "null",
    '"a string"',
    '{"a": NaN}',
    '{"note": Infinity}',
    '{"note": "' + "n" * 70_000 + '"}',
    '{"task_id": "' + "t" * 300 + '"}',
    '{"text": "\\ud800"}',
    "\x00",
]


#: Inputs that hit the defects the xfail tests in test_chaos_grpc.py name; left out of the
#: general fuzz so that it guards everything else.
DEEP_JSON = ["[" * 100_000, '{"a":' * 50_000]
BAD_TIMESTAMPS = [(-(2**62), 0), (2**62, 0), (253402300800, 0), (0, -1), (0, 10**9)]
HUGE_ID = "x" * 100_000


def random_control_event(rng: random.Random) -> control_pb2.ControlEvent:
    ev = control_pb2.ControlEvent()
    ev.id = rng.choice(["", "c1", f"id-{rng.randrange(10**9)}", "i" * 300, "ünï ✓", "x" * 5000])
    ev.kind = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 99, -1, 2**31 - 1])
    if rng.random() < 0.3:
        ev.custom_kind = rng.choice(["CHECKPOINT", "PAUSE", "steer", "", "x" * 500, "\x00"])
    which = rng.choice([None, "steer", "rewind", "approve", "reject", "inject_message"])
    text = rng.choice(["", " ", "note", "n" * 9000, "t1", "t" * 300, "x" * 70_000, "ü" * 30_000])
    if which == "steer":
        ev.steer.note = text
        ev.steer.annotation_id = rng.choice(["", "a" * 300])
    elif which == "rewind":
        ev.rewind.task_id = text
    elif which == "approve":
        ev.approve.target_id = text
    elif which == "reject":
        ev.reject.target_id = text
    elif which == "inject_message":
        ev.inject_message.text = text
        ev.inject_message.role = rng.choice(["", "user", "system", "r" * 1000])
    if rng.random() < 0.3:
        ev.extra_json = rng.choice(_EXTRA_JSON)
    if rng.random() < 0.2:
        ev.cancel_reason = rng.choice(["why", "r" * 70_000])
    if rng.random() < 0.2:
        ev.intercept_enabled = rng.random() < 0.5
    if rng.random() < 0.2:
        ev.issued_at.seconds = rng.choice([-62135596800, -1, 0, 253402300799])
        ev.issued_at.nanos = rng.choice([0, 999_999_999])
    if rng.random() < 0.1:
        ev.target.task_id = "t" * rng.choice([1, 300])
    return ev


def valid_bytes_request(rng: random.Random) -> bytes:
    """Random bytes that still parse as a SendControlRequest (the general fuzz sends these;
    bytes that do not parse hit a defect, see the xfail test)."""
    while True:
        data = random_bytes_request(rng)
        try:
            service_pb2.SendControlRequest.FromString(data)
            service_pb2.GetRunRequest.FromString(data)
        except Exception:  # DecodeError, or upb's own
            continue
        return data


def random_bytes_request(rng: random.Random) -> bytes:
    """A request that is not a well-formed message: random bytes, or a valid one truncated or
    with a string field holding invalid UTF-8."""
    roll = rng.random()
    if roll < 0.4:
        return rng.randbytes(rng.randrange(0, 200))
    good = service_pb2.SendControlRequest(run_id=RUN_IDS[0], control=random_control_event(rng)).SerializeToString()
    if roll < 0.7:
        return good[: rng.randrange(0, max(1, len(good)))]
    # field 1 (run_id), length-delimited, invalid UTF-8
    return b"\x0a\x03\xff\xfe\xfd" + good
