"""LoggingSink: one compact JSON line per event through the ``logging`` module (for dev)."""

from __future__ import annotations

import logging

from goldfive.errors import SinkError
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.sinks._json import message_to_json

__all__ = ["LoggingSink"]


class LoggingSink:
    """Logs each event as protobuf JSON on ``logger`` (a Logger, a logger name, or None for
    ``"goldfive.events"``) at ``level``. The line is only built when the level is enabled."""

    def __init__(self, logger: logging.Logger | str | None = None, level: int = logging.INFO) -> None:
        if logger is None or isinstance(logger, str):
            logger = logging.getLogger(logger or "goldfive.events")
        self.logger = logger
        self.level = level
        self._closed = False

    async def emit(self, event: Event) -> None:
        if self._closed:
            raise SinkError("LoggingSink is closed")
        if self.logger.isEnabledFor(self.level):
            self.logger.log(self.level, "%s", message_to_json(event))

    async def close(self) -> None:
        self._closed = True
