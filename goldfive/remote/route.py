"""How a served run's controls reach it: one seam, a route per way a run can be reached.

A run a server serves is reached, at any moment, by exactly one route:

- :class:`LocalRoute`: the run executes in this process; its ControlChannel answers.
- ``RunnerRoute`` (goldfive.hub.connected): its runner is connected to this hub; the control
  goes down the runner's stream and the runner's ack comes back up.
- ``HubRoute`` (goldfive.hub.fleet): its runner is connected to another hub of the fleet; the
  control is routed there through the shared database.
- :class:`NotLive`: nothing executes it now (recorded, ended, interrupted, pushed by a producer
  that takes no controls, waiting to be placed): every control is answered FAILURE at once,
  with the reason in words.

The served run keeps its route current (a runner connecting or leaving swaps it); the Runs
service only ever calls ``route.send``. A route never raises for a run that is not reachable:
that is an ack, so every control gets exactly one answer (docs/protocol.md#acks). ``send`` raises
TimeoutError when the run did not ack within ``timeout`` seconds (the control may still reach
it), and ValueError for a control id that already waits for its ack.
"""

from __future__ import annotations

from typing import Protocol

from goldfive.control import AckResult, ControlAck, ControlChannel, ControlMessage
from goldfive.errors import ChannelClosedError

__all__ = ["RUN_NOT_ACTIVE", "ControlRoute", "LocalRoute", "NotLive"]

RUN_NOT_ACTIVE = "run not active"


class ControlRoute(Protocol):
    """Where a served run's controls go now (see the module's docstring)."""

    @property
    def live(self) -> bool:
        """A control sent now can reach the run."""
        ...

    async def send(self, msg: ControlMessage, timeout: float) -> ControlAck:
        """Deliver ``msg`` and return the run's ack (or the route's FAILURE, in words)."""
        ...


class NotLive:
    """Nothing executes the run now: ``detail`` says why, in the ack of every control."""

    live = False

    def __init__(self, detail: str = RUN_NOT_ACTIVE) -> None:
        self.detail = detail

    async def send(self, msg: ControlMessage, timeout: float) -> ControlAck:
        return ControlAck(msg.id, AckResult.FAILURE, self.detail)


class LocalRoute:
    """The run executes in this process: its own ControlChannel acks (exactly once)."""

    def __init__(self, channel: ControlChannel) -> None:
        self.channel = channel

    @property
    def live(self) -> bool:
        return not self.channel.closed

    async def send(self, msg: ControlMessage, timeout: float) -> ControlAck:
        if self.channel.closed:
            return ControlAck(msg.id, AckResult.FAILURE, RUN_NOT_ACTIVE)
        try:
            return await self.channel.request(msg, timeout)
        except ChannelClosedError:
            return ControlAck(msg.id, AckResult.FAILURE, RUN_NOT_ACTIVE)
