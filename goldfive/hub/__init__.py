"""The hub: runs in other processes connect to ``goldfive serve`` over ``Hub.Connect``.

The server side: :class:`HubService` (the servicer) and :class:`RunnerAttachment` (what
such a run's :class:`~goldfive.remote.host.ServedRun` holds: its runner's stream; until
issue 22 it was the subclass ``ConnectedRun``). The runner's side lives in :mod:`goldfive.link` (``HubLink``,
``EventBuffer``), which imports none of this; both are re-exported here as before.
"""

from goldfive.hub.connected import CONNECTED, DISCONNECTED, INTERRUPTED, RunnerAttachment, runner_of
from goldfive.hub.service import DEFAULT_INTERRUPT_AFTER, HubService
from goldfive.link.buffer import DEFAULT_MAX_MEMORY, EventBuffer
from goldfive.link.runner import HubLink

__all__ = [
    "CONNECTED",
    "DEFAULT_INTERRUPT_AFTER",
    "DEFAULT_MAX_MEMORY",
    "DISCONNECTED",
    "INTERRUPTED",
    "EventBuffer",
    "HubLink",
    "HubService",
    "RunnerAttachment",
    "runner_of",
]
