"""The hub: runs in other processes connect to ``goldfive serve`` over ``Hub.Connect``.

The server side: :class:`HubService` (the servicer) and :class:`ConnectedRun` (such a run,
served like a hosted one). The runner's side lives in :mod:`goldfive.link` (``HubLink``,
``EventBuffer``), which imports none of this; both are re-exported here as before.
"""

from goldfive.hub.connected import CONNECTED, DISCONNECTED, INTERRUPTED, ConnectedRun
from goldfive.hub.service import DEFAULT_INTERRUPT_AFTER, HubService
from goldfive.link.buffer import DEFAULT_MAX_MEMORY, EventBuffer
from goldfive.link.runner import HubLink

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
