"""Controls that come down a run's stream from its hub: each is decoded at this edge and sent
on the run's own ControlChannel as a request (the run's one reader answers it); its ack goes
back up. A control that cannot be decoded, or that arrives when the channel is closed, is
acked FAILURE here with the reason, so every control the hub routed gets exactly one ack."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from goldfive import conv
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlMessage
from goldfive.errors import ChannelClosedError, ConversionError
from goldfive.pb.goldfive.v1.control_pb2 import ControlEvent

__all__ = ["ControlFeed"]


class ControlFeed:
    """Hands the hub's controls to ``channel``; ``send_ack`` sends each ack up. Each request
    waits in a task of its own (a PAUSE's ack must not hold up the next control);
    :meth:`cancel` ends those still waiting when the link closes."""

    def __init__(self, channel: ControlChannel, send_ack: Callable[[ControlAck], None]) -> None:
        self.channel = channel
        self._send_ack = send_ack
        self._waiting: set[asyncio.Task[None]] = set()

    def feed(self, pb: ControlEvent) -> None:
        """A ``ControlEvent`` from the hub: data, decoded here, never trusted to be well formed."""
        try:
            msg = conv.from_pb_control_event(pb)
        except ConversionError as exc:
            self._send_ack(ControlAck(pb.id, AckResult.FAILURE, f"malformed control: {exc}"))
            return
        task = asyncio.get_running_loop().create_task(self._request(msg))
        self._waiting.add(task)
        task.add_done_callback(self._waiting.discard)

    async def _request(self, msg: ControlMessage) -> None:
        try:
            ack = await self.channel.request(msg)
        except ChannelClosedError:
            ack = ControlAck(msg.id, AckResult.FAILURE, "run not active: the runner was closed")
        except ValueError as exc:  # the same id is already waiting: its ack answers both
            ack = ControlAck(msg.id, AckResult.FAILURE, str(exc))
        self._send_ack(ack)

    def cancel(self) -> None:
        for task in list(self._waiting):
            task.cancel()
