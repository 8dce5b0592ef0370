"""The hub: runs in other processes connect to ``goldfive serve`` over ``Hub.Connect``.

Server side: :class:`HubService` (the servicer) and :class:`ConnectedRun` (such a run, served
like a hosted one). Runner side: :class:`HubLink` (what ``Runner(hub=...)`` adds to its sinks)
and its :class:`EventBuffer` (bounded in memory, spilled to disk past the bound).
"""

from goldfive.hub.buffer import DEFAULT_MAX_MEMORY, EventBuffer
from goldfive.hub.connected import CONNECTED, DISCONNECTED, INTERRUPTED, ConnectedRun
from goldfive.hub.link import HubLink
from goldfive.hub.service import DEFAULT_INTERRUPT_AFTER, HubService

__all__ = [
    "CONNECTED",
    "DEFAULT_INTERRUPT_AFTER",
    "DEFAULT_MAX_MEMORY",
    "DISCONNECTED",
    "INTERRUPTED",
    "ConnectedRun",
    "EventBuffer",
    "HubLink",
    "HubService",
]
