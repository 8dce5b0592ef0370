"""A served run can be named by a unique prefix of its id (people copy a short one)."""

import pytest

from goldfive import Plan, Runner, StaticPlanner, Task
from goldfive.control import ControlKind, ControlMessage
from goldfive.errors import RemoteError
from goldfive.remote import RunHost, start_server
from goldfive.link.client import RemoteClient


def _factory(*, sinks, control, run_id):
    async def agent(task, session):
        return "ok"

    return Runner(agent=agent, planner=StaticPlanner(Plan(tasks=[Task("t1", "one")])), sinks=sinks, control=control, run_id=run_id)


async def test_a_unique_prefix_names_the_run_and_an_ambiguous_one_is_refused(tmp_path):
    host = RunHost(tmp_path / "runs.sqlite")
    server = await start_server(host, listen="127.0.0.1:0")
    try:
        for rid in ("abcd1111", "abcd2222", "ffff0000"):
            run = host.start_run(_factory, "go", run_id=rid)
            await run.task
        async with RemoteClient(server.address) as client:
            snap = await client.get_run("ffff")
            assert snap.summary.run_id == "ffff0000"
            ack = await client.send_control("ffff", ControlMessage(ControlKind.STATUS_QUERY))
            assert ack.detail == "run not active"
            with pytest.raises(RemoteError, match="matches 2 runs"):
                await client.get_run("abcd")
            with pytest.raises(RemoteError, match="prefix 'ab' is too short: give at least 4 characters"):
                await client.get_run("ab")  # once "unknown run", which it is not (issue 23, low)
            with pytest.raises(RemoteError, match="prefix 'zz' is too short: give at least 4 characters"):
                await client.get_run("zz")  # no run starts so: the same words (once "unknown run")
            with pytest.raises(RemoteError, match="unknown run 'zzzz'"):
                await client.get_run("zzzz")  # long enough, and no run starts so
    finally:
        await server.stop(None)
