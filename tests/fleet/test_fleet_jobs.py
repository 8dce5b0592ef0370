"""The fleet's jobs in one process (goldfive.hub.fleet), two hubs on one real PostgreSQL: what
one hub's ownership, recorder and routing write, the other's listener, following and
ownership see. The same paths as tests/fleet/test_fleet.py without the servers and runners,
so a fault shows which job it is in."""

from __future__ import annotations

from goldfive import events as E
from goldfive.control import AckResult, ControlKind, ControlMessage
from goldfive.hub.connected import DISCONNECTED, runner_of
from goldfive.hub.fleet import Fleet
from goldfive.remote.host import RUN_NOT_ACTIVE, Origin, RunHost
from goldfive.remote.summaries import summary
from goldfive.store.postgres import PostgresStore
from goldfive.testing import until
from goldfive.types import Session


async def test_a_run_one_hub_claims_and_writes_is_followed_shown_and_routed_to_by_another(pg_dsn: str) -> None:
    store_a, store_b = await PostgresStore.open(pg_dsn), await PostgresStore.open(pg_dsn)
    host_a, host_b = RunHost(":memory:"), RunHost(":memory:")
    a = Fleet(store_a, host_a, address="127.0.0.1:1001", interrupt_after=30, heartbeat=0.05)
    b = Fleet(store_b, host_b, address="127.0.0.1:1002", interrupt_after=30, heartbeat=0.05)
    await a.start()
    await b.start()
    try:
        await a.claim("run-j", "runner-host", 42)
        await a.recorder.emit(E.run_started(Session(run_id="run-j"), goal_summary="from hub a"))
        assert await a.recorder.commit()

        run = await until(lambda: host_b.get("run-j"), "hub b serves the run hub a wrote")
        assert runner_of(run) is not None and run.state.goal_summary == "from hub a"
        await until(lambda: run.hub == "127.0.0.1:1001" and run.host == "runner-host", "shown connected to hub a")
        assert run.origin is Origin.FOLLOWED and summary(run).origin == "followed"  # its runner is on hub a

        # Routed to hub a, which has no such run in its process: its answer comes back.
        ack = await run.control(ControlMessage(ControlKind.STATUS_QUERY), 5.0)
        assert ack.result is AckResult.FAILURE and f"{RUN_NOT_ACTIVE} on hub 127.0.0.1:1001" in ack.detail

        await a.release("run-j")
        await until(lambda: run.hub == "" and run.connection == DISCONNECTED, "shown disconnected once hub a let it go")
        ack = await run.control(ControlMessage(ControlKind.STATUS_QUERY), 5.0)
        assert ack.result is AckResult.FAILURE and "not delivered" in ack.detail
        assert a.health == b.health == ""
    finally:
        await b.stop()
        await a.stop()
        await store_a.close()
        await store_b.close()
