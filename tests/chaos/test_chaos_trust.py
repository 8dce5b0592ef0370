"""The trust boundary under random runner-token operations, against a real hub (``serve`` in
this process, with an operator and three runner tokens, restarted at the end).

Each step is drawn at random: a runner connects a run of its own, or another token's (on a
Connect stream or a ConnectShared lane), or the hub's hosted run; sends forged events of every
kind (decisions with made-up authors and control ids, RunStarted launches naming a module that
writes a marker file when imported, or that exits on import); opens bursts of hellos; the
operator approves a run's call, whose runner reports the decision truthfully. After each step:

- nothing was imported that an operator did not start (the marker file does not exist);
- no run changed hands across tokens (each registration keeps its first owner);
- every ledger entry the hub marked "routed" matches a control the operator sent, with its
  author; every other decision is marked "reported";
- the hub answers.

The hub is then stopped and started again (the restart that used to import planted modules):
the invariants hold again, and only the hub's own hosted run goes on live.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from goldfive import events
from goldfive.control import ControlKind, ControlMessage
from goldfive.pb.goldfive.v1 import control_pb2, service_pb2
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.remote import RemoteClient
from goldfive.remote.launch import demo_run, resume_with
from goldfive.remote.server import RemoteServer, serve
from goldfive.types import Session
from tests.chaos.conftest import Chaos
from tests.chaos.tally import TALLY
from tests.hub.drive import Lanes, Stream, run_events

pytestmark = pytest.mark.chaos

OP = "operator-secret-0123456789"
RUNNERS = {"r1": "runner-one-0123456789", "r2": "runner-two-0123456789", "r3": "runner-three-012345678"}
TOKENS: dict[str, Any] = {"token": "alice=" + OP, "runner_token": [f"{n}={s}" for n, s in RUNNERS.items()]}
#: Every payload kind an Event can carry: each is forged at least once in a pass.
KINDS = [f.name for f in Event.DESCRIPTOR.oneofs_by_name["payload"].fields]


async def _start(db: Path) -> tuple[asyncio.Task[None], RemoteServer]:
    ready: asyncio.Future[RemoteServer] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(
        serve("127.0.0.1:0", db_path=db, ready=ready, resume_with=resume_with, runs=[demo_run(0.5)], **TOKENS)
    )
    done, _ = await asyncio.wait({task, ready}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()
    return task, ready.result()


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


class Pass:
    def __init__(self, chaos: Chaos, tmp_path: Path) -> None:
        self.rng = chaos.rng
        self.chaos = chaos
        self.evil = tmp_path / "evil"
        self.evil.mkdir()
        self.marker = tmp_path / "imported"
        (self.evil / "evilmod.py").write_text(f"open({str(self.marker)!r}, 'w').write('ran')\nasync def agent(t, s):\n    return ''\n")
        (self.evil / "exitmod.py").write_text("import sys\nsys.exit(7)\n")
        self.owners: dict[str, str] = {}  # run -> the token that registered it (what the test expects)
        self.next_seq: dict[str, int] = {}
        self.streams: dict[str, Stream] = {}
        self.routed: dict[str, str] = {}  # control id -> run, sent by the operator
        self.counts = {"ops": 0, "refused": 0, "forged": 0, "hellos": 0, "approvals": 0, "kinds": set()}

    # -- the random steps ------------------------------------------------------------------
    async def own_run(self, ch: grpc.aio.Channel, server: RemoteServer) -> None:
        name = self.rng.choice(sorted(RUNNERS))
        run_id = f"{name}-run-{len(self.owners)}"
        stream = Stream(ch, RUNNERS[name])
        welcome = await stream.hello_as(run_id)
        assert welcome.WhichOneof("body") == "welcome", welcome
        self.owners[run_id] = name
        evs = run_events(run_id, self.rng.randint(1, 4))
        await stream.send(evs)
        self.next_seq[run_id] = len(evs)
        self.streams[run_id] = stream

    async def steal(self, ch: grpc.aio.Channel, server: RemoteServer) -> None:
        if not self.owners:
            return
        run_id = self.rng.choice(sorted(self.owners))
        thief = self.rng.choice([n for n in RUNNERS if n != self.owners[run_id]])
        if self.rng.random() < 0.5:
            stream = Stream(ch, RUNNERS[thief])
            await stream.call.write(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id=run_id, take_over=self.rng.random() < 0.5)))
            exc = await stream.refused()
            assert exc.code() is grpc.StatusCode.PERMISSION_DENIED, exc.details()
        else:
            lanes = Lanes(ch, RUNNERS[thief])
            part = await lanes.open(self.rng.randint(1, 99), run_id)
            assert part.ended and part.code == grpc.StatusCode.PERMISSION_DENIED.value[0], part
            await lanes.call.done_writing()
        self.counts["refused"] += 1

    async def hosted(self, ch: grpc.aio.Channel, server: RemoteServer) -> None:
        hosted = [r for r in server.host.runs() if r.runner is not None]
        run = self.rng.choice(hosted)
        stream = Stream(ch, self.rng.choice(list(RUNNERS.values()) + [OP]))
        await stream.call.write(service_pb2.RunnerMessage(hello=service_pb2.RunnerHello(run_id=run.run_id, take_over=True)))
        exc = await stream.refused()
        assert exc.code() is grpc.StatusCode.FAILED_PRECONDITION, exc.details()
        self.counts["refused"] += 1

    async def forge(self, ch: grpc.aio.Channel, server: RemoteServer) -> None:
        live = [r for r in self.streams if r in self.next_seq]
        if not live:
            return
        run_id = self.rng.choice(sorted(live))
        seq = self.next_seq[run_id]
        batch = []
        for _ in range(self.rng.randint(1, 5)):
            kind = self.rng.choice(KINDS)
            ev = Event(run_id=run_id, sequence=seq, event_id=f"forged-{run_id}-{seq}")
            getattr(ev, kind).SetInParent()
            if kind == "run_started":
                target = self.rng.choice(["evilmod:agent", "exitmod:agent", "asyncio:sleep"])
                command = self.rng.choice(["serve", "run"])
                launch = {"command": command, "target": target, "agent": target, "cwd": str(self.evil), "goal": "g",
                          "base_url": "http://127.0.0.1:9/v1", "model": "m"}  # fmt: skip
                ev.run_started.launch_json = json.dumps(launch)
            elif kind == "approval_decided":
                d = ev.approval_decided
                d.outcome = self.rng.choice(["APPROVED", "EDITED_APPROVED", "REJECTED", "APPROVED_BY_RULE"])
                d.author = self.rng.choice(["alice", "bob", "rule", ""])
                d.control_id = self.rng.choice([*self.routed, "made-up", ""]) if self.routed else "made-up"
                d.target_id = "call"
                d.hub_check = "routed"  # a claim the hub must replace
            self.counts["kinds"].add(kind)  # type: ignore[union-attr]
            batch.append(ev)
            seq += 1
            if kind in ("run_completed", "run_aborted"):
                break  # the run ended: the hub refuses what would follow
        await self.streams[run_id].send(batch)
        self.counts["forged"] += len(batch)
        if batch[-1].WhichOneof("payload") in ("run_completed", "run_aborted"):
            del self.next_seq[run_id]  # nothing more to send it, and nothing to decide in it
        else:
            self.next_seq[run_id] = seq

    async def hellos(self, ch: grpc.aio.Channel, server: RemoteServer) -> None:
        name = self.rng.choice(sorted(RUNNERS))
        for i in range(self.rng.randint(5, 30)):
            stream = Stream(ch, RUNNERS[name])
            await stream.hello_as(f"hello-only-{name}-{self.counts['hellos']}-{i}")
            await stream.call.done_writing()
            self.counts["hellos"] += 1

    async def approve(self, ch: grpc.aio.Channel, server: RemoteServer) -> None:
        live = [r for r in self.streams if r in self.next_seq]
        if not live:
            return
        run_id = self.rng.choice(sorted(live))
        control_id = f"ap-{len(self.routed)}"
        async with RemoteClient(server.address, token=OP) as client:
            sent = asyncio.ensure_future(
                client.send_control(run_id, ControlMessage(kind=ControlKind.APPROVE, id=control_id, payload={"target_id": "call"}))
            )
            stream = self.streams[run_id]
            msg = await stream.read_until("control")
            assert msg.control.id == control_id
            await stream.call.write(
                service_pb2.RunnerMessage(ack=control_pb2.ControlAck(control_id=control_id, result=control_pb2.CONTROL_ACK_RESULT_SUCCESS))
            )
            await asyncio.wait_for(sent, 10)
        self.routed[control_id] = run_id
        seq = self.next_seq[run_id]
        truthful = events.approval_decided(
            Session(run_id=run_id), target_id="call", outcome="APPROVED", author="alice", client="ctl", kind="tool", control_id=control_id
        )
        truthful.sequence = seq
        await stream.send([truthful])
        self.next_seq[run_id] = seq + 1
        self.counts["approvals"] += 1

    # -- the invariants ----------------------------------------------------------------------
    async def check(self, server: RemoteServer) -> None:
        assert not self.marker.exists(), "a module a runner named was imported by the hub"
        registrations = await server.host.registry.all()
        for run_id, owner in self.owners.items():
            reg = registrations.get(run_id)
            assert reg is not None and reg.owner == owner, (run_id, reg, owner)
            run = server.host.get(run_id)
            assert run is not None and run.owner == owner
        async with RemoteClient(server.address, token=OP) as client:
            await client.list_runs(timeout=10)

    def check_ledger(self, db: Path) -> tuple[int, int]:
        """Every stored decision: "routed" only for the operator's own controls to that run,
        with its author; "reported" for everything else. (routed, reported) counts."""
        routed = reported = 0
        with sqlite3.connect(db) as conn:
            rows = conn.execute("SELECT run_id, payload FROM events WHERE kind = 'approval_decided'").fetchall()
        for run_id, payload in rows:
            d = Event.FromString(payload).approval_decided
            if d.hub_check == "routed":
                assert self.routed.get(d.control_id) == run_id and d.author == "alice", (run_id, d)
                assert d.outcome in ("APPROVED", "EDITED_APPROVED") and d.target_id == "call"
                routed += 1
            else:
                assert d.hub_check == "reported", (run_id, d)
                reported += 1
        return routed, reported


async def test_runner_tokens_cannot_cross_the_trust_boundary(chaos: Chaos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started = time.monotonic()
    work = tmp_path / "hub-cwd"  # the hub imports from here: nothing planted in it
    work.mkdir()
    monkeypatch.chdir(work)
    p = Pass(chaos, tmp_path)
    db = tmp_path / "hub.sqlite"
    steps = [p.own_run, p.own_run, p.steal, p.hosted, p.forge, p.forge, p.hellos, p.approve]
    task, server = await _start(db)
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            await p.own_run(ch, server)
            for _ in range(chaos.n(40, 800)):
                step = chaos.rng.choice(steps)
                await step(ch, server)
                p.counts["ops"] += 1  # type: ignore[operator]
                await p.check(server)
            for stream in p.streams.values():
                await stream.call.done_writing()
        await asyncio.sleep(0.5)  # the hub's group commit
    finally:
        await _stop(task)  # a graceful stop: the hosted run is left interrupted
    task, server = await _start(db)  # the restart
    try:
        await asyncio.sleep(1.0)
        await p.check(server)
        live = sorted(r.run_id for r in server.host.runs() if r.live)
        hosted = sorted(r.run_id for r in server.host.runs() if r.owner == "hub")
        assert set(live) <= set(hosted), f"a run the hub did not start went live after the restart: {live}"
        assert not any(r.run_id.startswith("hello-only") for r in server.host.runs()), "runs made by hellos alone were kept"
    finally:
        await _stop(task)
    routed, reported = p.check_ledger(db)
    assert routed == p.counts["approvals"], "every truthful decision the hub routed is marked routed"
    TALLY.add(
        trust_ops=int(p.counts["ops"]), trust_refused=int(p.counts["refused"]), trust_forged=int(p.counts["forged"]),
        trust_kinds=len(p.counts["kinds"]), trust_hellos=int(p.counts["hellos"]), trust_routed=routed,
        trust_reported=reported, trust_imports=int(p.marker.exists()), trust_restarts=1,
    )  # fmt: skip
    TALLY.time("trust", started)
