"""Serve, attach to and control runs over gRPC (``goldfive serve``, ``attach``, ``ctl``)."""

from goldfive.link.client import RemoteClient
from goldfive.remote.host import HostedRun, RunHost
from goldfive.remote.server import DEFAULT_LISTEN, RemoteServer, default_db_path, serve, start_server
from goldfive.remote.service import RunsService

__all__ = [
    "DEFAULT_LISTEN",
    "HostedRun",
    "RemoteClient",
    "RemoteServer",
    "RunHost",
    "RunsService",
    "default_db_path",
    "serve",
    "start_server",
]
