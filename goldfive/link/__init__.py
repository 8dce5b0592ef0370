"""The runner's and the client's end of goldfive's gRPC services: connecting a run to a hub
(``HubLink``, the process's shared stream ``HubMux``, the ``EventBuffer`` of what the hub has
not confirmed) and the client that lists, watches and controls runs (``RemoteClient``).

Nothing here imports the server (goldfive.hub's service, goldfive.remote's host and server):
a process that only runs agents, or a hook that only reports to a hub, loads none of it
(tests/test_import_layers.py checks what importing it loads).
"""

from goldfive.link.buffer import DEFAULT_MAX_MEMORY, EventBuffer
from goldfive.link.client import RemoteClient
from goldfive.link.mux import HubMux
from goldfive.link.runner import HubLink, hub_link
from goldfive.link.wire import MAX_FRAME_BYTES, bearer_metadata

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "EventBuffer",
    "HubLink",
    "HubMux",
    "MAX_FRAME_BYTES",
    "RemoteClient",
    "bearer_metadata",
    "hub_link",
]
