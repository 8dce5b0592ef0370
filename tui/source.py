"""Where the TUI gets a run from: the RunSource protocol.

A source yields the run's events (history first, then live) and sends controls, answering
each with the runtime's ack. LocalRunSource (a Runner in this process), GrpcRunSource (a run
served by a hub) and the runs screen's opened runs implement it; tests script one
(tests/tui/scripted.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AsyncIterator, Protocol, runtime_checkable

from goldfive.control import ControlAck, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event

if TYPE_CHECKING:
    from goldfive.sinks.memory import Missed

__all__ = ["RunSource"]


@runtime_checkable
class RunSource(Protocol):
    """Optional attributes the run screen looks for: ``owns_run`` (True when the run lives in this
    process, so quitting would end it), ``recorded_at()``, ``wait_finished()`` and
    ``tracebacks`` (task id -> the agent's traceback), all on LocalRunSource."""

    title: str

    def events(self) -> AsyncIterator[Event | Missed]:
        """History then live events; ends when the run's stream ends. A ``Missed`` marks
        events this reader lost (count, first_sequence, last_sequence)."""
        ...

    async def send(self, msg: ControlMessage) -> ControlAck:
        """Deliver one control and return its ack."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...
