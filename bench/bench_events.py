"""Cost of building one event with its envelope, against protobuf's own floor.

Run: python bench/bench_events.py [N]

For a few representative factories, microseconds per event (median of PASSES passes of N
events each, after a warm-up pass) and the ratio to a baseline measured in the same run:
a bare ``Event()`` with the same envelope and payload fields set directly from constants
(no sequence counter, no id generation, no clock, no text checks). The rows and their
baselines are interleaved within each pass so a busy machine slows both alike.

Rows with non-ASCII text show the price of the text check on its slow path; a row whose
factory raises (a lone surrogate before text was cleaned) prints "raises".
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Callable

from goldfive import events
from goldfive.control import ControlKind, ControlMessage
from goldfive.pb.goldfive.v1 import control_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.types import Session

PASSES = 7
NOW_MS = 1_700_000_000_123
ASCII_RESULT = "drafted 6 slides about Python"
UNICODE_RESULT = "drafted 6 slides about Python — résumé ✓ 🐍"
SURROGATE_RESULT = "drafted 6 slides \ud800 about Python"
STEER = ControlMessage(ControlKind.STEER, id="ctl-1", payload={"note": "fewer slides", "author": "ana"})


def _envelope(ev: Event) -> None:
    ev.event_id = "run-bench:7:0badf00d"
    ev.run_id = "run-bench"
    ev.sequence = 7
    ev.session_id = "run-bench"
    ts = ev.emitted_at
    ts.seconds = NOW_MS // 1000
    ts.nanos = NOW_MS % 1000 * 1_000_000


def base_task_started() -> Event:
    ev = Event()
    _envelope(ev)
    p = ev.task_started
    p.task_id = "t1"
    p.assignee_agent_id = "writer"
    return ev


def base_task_completed(text: str) -> Callable[[], Event]:
    def build() -> Event:
        ev = Event()
        _envelope(ev)
        p = ev.task_completed
        p.task_id = "t1"
        p.result_summary = text
        return ev

    return build


def base_task_progress() -> Event:
    ev = Event()
    _envelope(ev)
    p = ev.task_progress
    p.task_id = "t1"
    p.detail = "step 2 of 3"
    p.fraction = 0.5
    return ev


def base_control_received() -> Event:
    ev = Event()
    _envelope(ev)
    r = ev.control_received
    c = r.control
    c.id = "ctl-1"
    c.kind = control_pb2.CONTROL_KIND_STEER
    c.steer.note = "fewer slides"
    c.steer.author = "ana"
    r.kind = "STEER"
    r.author = "ana"
    return ev


Row = tuple[str, Callable[[Session], Event], Callable[[], Event]]
ROWS: list[Row] = [
    ("task_started", lambda s: events.task_started(s, "t1", "writer"), base_task_started),
    ("task_completed", lambda s: events.task_completed(s, "t1", ASCII_RESULT), base_task_completed(ASCII_RESULT)),
    ("task_progress", lambda s: events.task_progress(s, "t1", detail="step 2 of 3", fraction=0.5), base_task_progress),
    ("control_received (STEER)", lambda s: events.control_received(s, STEER), base_control_received),
    ("task_completed, non-ASCII text", lambda s: events.task_completed(s, "t1", UNICODE_RESULT),
     base_task_completed(UNICODE_RESULT)),
    ("task_completed, lone surrogate", lambda s: events.task_completed(s, "t1", SURROGATE_RESULT),
     base_task_completed(UNICODE_RESULT)),
]  # fmt: skip


def _per_event_us(fn: Callable[[], object], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def _raises(make: Callable[[Session], Event]) -> bool:
    try:
        make(Session(run_id="probe"))
    except ValueError:  # UnicodeEncodeError is a ValueError
        return True
    return False


def main(n: int) -> None:
    runnable = [(name, make, base) for name, make, base in ROWS if not _raises(make)]
    samples: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in runnable}
    for p in range(PASSES + 1):  # pass 0 warms up and is discarded
        session = Session(run_id="run-bench", clock=lambda: NOW_MS)
        for name, make, base in runnable:
            b = _per_event_us(base, n)
            f = _per_event_us(lambda: make(session), n)
            if p:
                samples[name][0].append(b)
                samples[name][1].append(f)
    print(f"{n} events per pass, median of {PASSES} passes after a warm-up pass")
    print(f"{'factory':34s} {'µs/event':>9s} {'baseline µs':>12s} {'ratio':>7s}")
    for name, _, _ in ROWS:
        if name not in samples:
            print(f"{name:34s} {'raises':>9s}")
            continue
        b, f = (statistics.median(xs) for xs in samples[name])
        print(f"{name:34s} {f:9.2f} {b:12.2f} {f / b:6.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
