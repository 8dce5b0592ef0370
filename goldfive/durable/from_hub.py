"""A run's recorded history read back from the hub that stores it, for a runner that lost its
process (a Ray actor restarted on another node, a runner restarted by hand) and continues the
run with :meth:`goldfive.runner.Runner.continue_from_events`.

The hub holds what it confirmed: ``GetRun`` says how far (``last_sequence``), and the events
0..last are read with ``SubscribeBatches``; the stream goes on live after them and is closed as
soon as ``last`` is read. Nothing here writes to the hub.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from goldfive.errors import RemoteError, ResumeRefused
from goldfive.pb.goldfive.v1.events_pb2 import Event

if TYPE_CHECKING:
    from goldfive.link.client import RemoteClient

__all__ = ["history_from_hub"]


async def history_from_hub(
    address: str,
    run_id: str,
    *,
    token: str | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    client: RemoteClient | None = None,
) -> list[Event]:
    """Run ``run_id``'s events as the hub at ``address`` stores them, 0..last in order; [] when
    the hub knows the run but holds no event of it yet. RemoteError when the hub cannot be
    asked (NOT_FOUND for a run it does not know); ResumeRefused when what it sends has a gap.
    ``client``: a connection to that hub to ask on (many runs of one process share one; it is
    left open), instead of one of its own."""
    if client is not None:
        return await _read(client, run_id, timeout)
    from goldfive.link.client import RemoteClient

    async with RemoteClient(address, token, os.fspath(tls_ca) if tls_ca is not None else None) as own:
        return await _read(own, run_id, timeout)


async def _read(client: RemoteClient, run_id: str, timeout: float) -> list[Event]:
    import asyncio

    snap = await client.get_run(run_id, timeout=timeout)
    last = snap.last_sequence
    if last < 0:
        return []
    out: list[Event] = []

    async def read() -> None:
        batches = client.follow_batches(run_id, -1)
        async with contextlib.aclosing(batches):
            async for batch in batches:
                out.extend(ev for ev in batch if ev.sequence <= last)
                if batch[-1].sequence >= last:
                    return

    try:
        await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        raise RemoteError("DEADLINE_EXCEEDED", f"run {run_id}'s history was not read within {timeout:.0f}s") from None
    for expect, ev in enumerate(out):
        if ev.sequence != expect:
            raise ResumeRefused(f"the hub sent run {run_id}'s event {ev.sequence} where {expect} belongs")
    if len(out) != last + 1:
        raise ResumeRefused(f"the hub holds run {run_id} through {last} but sent {len(out)} events")
    return out
