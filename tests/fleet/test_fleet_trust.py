"""Several hubs on one PostgreSQL database keep one trust model: a run's registration is the
fleet's, so a runner refused by one hub is refused by every hub, a hub's hosted run takes no
runner anywhere, and an event that conflicts with a stored one is reported, not dropped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import psycopg

from goldfive.remote import RemoteClient
from goldfive.remote.launch import demo_run
from tests.hub.conftest import until
from tests.hub.drive import run_events
from tests.hub.test_hub_trust import OP, R1, R2, Stream, _async, _serve_until_ready, _stop


async def test_a_run_registered_on_one_hub_is_refused_to_another_token_on_every_hub(pg_dsn: str, tmp_path: Path) -> None:
    task_a, a = await _serve_until_ready(pg_dsn, runs=[demo_run(2.0)])  # type: ignore[arg-type]
    task_b, b = await _serve_until_ready(pg_dsn)  # type: ignore[arg-type]
    try:
        [hosted] = a.host.runs()
        async with grpc.aio.insecure_channel(a.address) as ch_a, grpc.aio.insecure_channel(b.address) as ch_b:
            owner = Stream(ch_a, R1)
            await owner.hello_as("fleet-owned")
            await owner.send(run_events("fleet-owned", 2))
            await until(lambda: _async(a.host.get("fleet-owned").state.last_sequence == 1), what="stored on A")  # type: ignore[union-attr]
            thief = Stream(ch_b, R2)
            await thief.call.write(thief_hello("fleet-owned"))
            exc = await thief.refused()
            assert exc.code() is grpc.StatusCode.PERMISSION_DENIED
            assert exc.details() == "run fleet-owned belongs to token 'r1'; runner token 'r2' may not connect as it"
            for secret in (R1, R2):  # a hub's hosted run takes no runner, on the other hub either
                intruder = Stream(ch_b, secret)
                await intruder.call.write(thief_hello(hosted.run_id))
                refused = await intruder.refused()
                assert refused.code() is grpc.StatusCode.FAILED_PRECONDITION
            with psycopg.connect(pg_dsn) as conn:
                [(is_hosted,)] = conn.execute("SELECT hosted FROM goldfive_run_owners WHERE run_id = %s", (hosted.run_id,))
            assert is_hosted  # still A's hosted run
            # A different event already stored at a sequence the runner sends next: refused,
            # counted, and said in the hub's health (ctl runs' "hub degraded" line).
            planted = run_events("fleet-owned", 1, start=2)[0]
            planted.event_id = "planted"
            with psycopg.connect(pg_dsn) as conn:
                conn.execute(
                    "INSERT INTO goldfive_events VALUES (%s, %s, %s, %s, %s, %s)",
                    ("fleet-owned", 2, "planted", "task_progress", 0, planted.SerializeToString()),
                )
            await owner.send([run_events("fleet-owned", 3)[2]])  # the runner's own event 2
            async with RemoteClient(a.address, token=OP) as client:

                async def reported() -> bool:
                    await client.list_runs()
                    return "1 event(s) refused" in client.hub_warning

                await until(reported, what="A reporting the conflict")
                assert "run fleet-owned sequence 2" in client.hub_warning
            await owner.call.done_writing()
    finally:
        await _stop(task_b)
        await _stop(task_a)


def thief_hello(run_id: str):  # type: ignore[no-untyped-def]
    from goldfive.pb.goldfive.v1 import service_pb2

    return service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id=run_id, host="evil", pid=666))
