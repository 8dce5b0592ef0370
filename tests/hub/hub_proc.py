"""A hub in its own process (to be killed): ``python -m tests.hub.hub_proc DB PORT [INTERRUPT_AFTER]``.

Serves the runs recorded in DB and accepts connected runs on 127.0.0.1:PORT; prints
``listening <port>`` once it does.
"""

from __future__ import annotations

import asyncio
import sys

from goldfive.remote import RunHost, start_server


async def main(db: str, port: int, interrupt_after: float) -> None:
    host = RunHost(db)
    host.load_recorded()
    server = await start_server(host, listen=f"127.0.0.1:{port}", interrupt_after=interrupt_after)
    print(f"listening {server.port}", flush=True)
    await server.server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 60.0))
