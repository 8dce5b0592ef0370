"""The hub's limits, defined once for every boundary that checks them."""

from __future__ import annotations

from goldfive.link.wire import MAX_FRAME_BYTES, MAX_MESSAGE_BYTES
from goldfive.pb.goldfive.v1 import service_pb2

__all__ = ["DEFAULT_INTERRUPT_AFTER", "MAX_EVENT_BYTES", "MAX_FRAME_BYTES", "MAX_HOST", "MAX_MESSAGE_BYTES", "MAX_RUN_ID", "hello_problem", "run_id_problem"]

#: Seconds a runner may be gone before its run shows INTERRUPTED (``serve --interrupt-after``).
DEFAULT_INTERRUPT_AFTER = 60.0
#: The longest run id a runner may register.
MAX_RUN_ID = 128
#: The longest host name kept from a runner's hello.
MAX_HOST = 255
#: The largest event a runner may send (serialized bytes), unless ``serve --runner-limits``
#: says otherwise: every event a hub stores is also held in memory for its watchers.
MAX_EVENT_BYTES = 1 << 20


def run_id_problem(run_id: str) -> str:
    """Why ``run_id`` cannot name a run a hub stores, or "" (every way a run arrives)."""
    if not run_id.strip():
        return "no run id" if not run_id else "the run id is blank"
    if len(run_id) > MAX_RUN_ID:
        return f"run id is {len(run_id):,} characters; at most {MAX_RUN_ID}"
    if not run_id.isprintable():
        return "run id has unprintable characters (a line break, a control character)"
    return ""


def hello_problem(hello: service_pb2.RunnerHello) -> str:
    """Why a runner's hello is refused, or "" (Connect and every ConnectShared lane)."""
    if not hello.run_id:
        return "the hello names no run id"
    problem = run_id_problem(hello.run_id)
    if problem:
        return problem
    if hello.resume_after < -1:
        return f"resume_after {hello.resume_after} is below -1"
    return ""
