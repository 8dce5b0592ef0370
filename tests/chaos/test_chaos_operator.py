"""Attacks on the person at the terminal: random escape-laden text from a runner through a
real hub into ``ctl``'s output and the event lines; notification bursts from noisy runs; and
refused clients that keep writing on the hub's streams.

What must hold: nothing below 0x20 but newline and tab, and nothing in 0x7f-0x9f, reaches
stdout or stderr; every notice is delivered (its run's newest one last) or counted as
dropped; a refused stream writer is told UNAUTHENTICATED, never INTERNAL.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from goldfive import events
from goldfive.cli import main
from goldfive.event_format import format_event
from goldfive.notify import Notice, NotifyCommand
from goldfive.pb.goldfive.v1 import service_pb2, service_pb2_grpc
from goldfive.remote import RunHost, start_server
from goldfive.remote.throttle import FREE_FAILURES, MAX_HELD_PER_PEER
from goldfive.terminal_text import terminal_safe
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Session
from tests.chaos.conftest import Chaos
from tests.chaos.tally import TALLY
from tests.escapes import HostileHub, forbidden_in, random_laden
from tests.hub.drive import run_events

pytestmark = pytest.mark.chaos

CTL_COMMANDS = (("runs",), ("status", "open-run"), ("status", "done-run"), ("waiting",), ("tail", "done-run"), ("ledger", "done-run"))


def test_random_escapes_from_a_runner_never_reach_ctls_output(tmp_path: Path, chaos: Chaos, request: pytest.FixtureRequest) -> None:
    rng = chaos.rng
    strings = 0

    def text(what: str) -> str:
        nonlocal strings
        strings += 1
        return random_laden(rng, rng.randint(1, 80))

    for round_ in range(chaos.n(2, 12)):
        hub = HostileHub(tmp_path / f"hub{round_}.sqlite", text)
        try:
            for args in CTL_COMMANDS:
                result = CliRunner().invoke(main, ["ctl", hub.server.address, *args], catch_exceptions=False)
                leaks = forbidden_in(result.output)  # stdout and stderr, as the terminal gets them
                TALLY.add(escape_outputs=1, escape_leaks=len(leaks))
                assert result.exit_code == 0 and leaks == [], f"ctl {' '.join(args)}: {leaks[:3]} {chaos.why(request.node.nodeid)}"
        finally:
            hub.stop()
    TALLY.add(escape_strings=strings)


def test_random_escapes_never_survive_an_event_line_or_the_sanitizer(chaos: Chaos, request: pytest.FixtureRequest) -> None:
    rng = chaos.rng
    s = Session(run_id="r1")
    for _ in range(chaos.n(400, 4000)):
        t = random_laden(rng, rng.randint(0, 60))
        TALLY.add(escape_strings=1, escape_lines=1)
        assert forbidden_in(terminal_safe(t, multiline=True)) == [] and terminal_safe(terminal_safe(t)) == terminal_safe(t)
        ev = rng.choice(
            [
                lambda: events.run_started(s, goal_summary=t),
                lambda: events.task_progress(s, t, detail=t),
                lambda: events.task_failed(s, "t1", t),
                lambda: events.approval_requested(s, target_id=t, kind="tool", prompt=t, tool_name=t, args={t: t}),
                lambda: events.drift_detected(s, DriftEvent(kind=DriftKind.OFF_TOPIC, severity=DriftSeverity.INFO, detail=t, task_id=t)),
                lambda: events.agent_step(s, task_id=t, step="tool_call", framework=t, tool_name=t, args={"q": t}, text=t),
                lambda: events.conversation_ended(s, t, t),
            ]
        )()
        line = format_event(ev)
        leaks = forbidden_in(line) + (["newline"] if "\n" in line else [])
        TALLY.add(escape_leaks=len(leaks))
        assert leaks == [], f"{events.kind_of(ev)}: {leaks[:3]} {chaos.why(request.node.nodeid)}"


async def test_notification_bursts_are_delivered_in_turn_or_counted(tmp_path: Path, chaos: Chaos, request: pytest.FixtureRequest) -> None:
    rng = chaos.rng
    for round_ in range(chaos.n(3, 15)):
        runs = [f"run{i}" for i in range(rng.randint(2, 12))]
        bound = rng.choice([1000, len(runs), max(1, len(runs) // 2)])
        out = tmp_path / f"notices{round_}.jsonl"
        command = NotifyCommand(f"{rng.choice(['', 'sleep 0.01; ', 'sleep 0.03; '])}cat >> {out}", max_waiting_runs=bound)
        sent: Counter[str] = Counter()
        newest: dict[str, int] = {}
        for n in range(rng.randint(20, chaos.n(300, 1500))):
            run = runs[0] if rng.random() < 0.7 else rng.choice(runs)  # one run floods, the others now and then
            kind = rng.choice(["approval"] * 8 + ["escalation", "failed"])
            command.send(Notice(run, kind, f"{kind}: n{n}", target_id=str(n)))
            sent[run] += 1
            newest[run] = n
            if rng.random() < 0.05:
                await asyncio.sleep(rng.choice([0, 0.001, 0.01]))
        await command.wait()
        delivered = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        counted: Counter[str] = Counter()
        last: dict[str, int] = {}
        for d in delivered:
            counted[d["run_id"]] += d["count"]
            last[d["run_id"]] = max(last.get(d["run_id"], -1), int(d["target_id"]))
        why = chaos.why(request.node.nodeid)
        assert sum(counted.values()) + command.dropped == command.received == sum(sent.values()), why
        starved = [r for r in sent if counted[r] == 0] if bound >= len(runs) else []
        TALLY.add(notify_rounds=1, notify_notices=command.received, notify_commands=command.sent,
                  notify_dropped=command.dropped, notify_starved=len(starved))  # fmt: skip
        if bound >= len(runs):  # room for every run: nothing dropped, each run's newest delivered
            assert command.dropped == 0 and starved == [] and last == newest, why


async def test_refused_clients_that_keep_writing_are_told_unauthenticated(tmp_path: Path, chaos: Chaos, request: pytest.FixtureRequest) -> None:
    from goldfive.remote.ingest import HostIngest, IngressService

    rng = chaos.rng
    token = "the-right-token-0123456789"
    codes: Counter[str] = Counter()

    async def writer(address: str) -> None:
        method = rng.choice(["Connect", "ConnectShared", "StreamEvents"])
        given = rng.choice([None, "wrong-token-0123456789", "", "Bearer", token + "x", "x" * 4000])  # not non-ASCII: grpc refuses it in the client
        md = (("authorization", f"Bearer {given}"),) if given is not None else ()
        async with grpc.aio.insecure_channel(address) as channel:
            hub, batch = service_pb2_grpc.HubStub(channel), service_pb2.EventBatch(events=run_events("r1", 3))
            if method == "Connect":
                call: Any = hub.Connect(metadata=md)
                message: Any = service_pb2.RunnerMessage(events=batch)
            elif method == "ConnectShared":
                call = hub.ConnectShared(metadata=md)
                message = service_pb2.RunnerFrame(parts=[service_pb2.RunnerPart(lane=1, message=service_pb2.RunnerMessage(events=batch))])
            else:
                call = service_pb2_grpc.GoldfiveIngressStub(channel).StreamEvents(metadata=md)
                message = run_events("r1", 1)[0]
            try:
                for _ in range(rng.choice([0, 1, 10, 200, 600])):
                    await call.write(message)
                    if rng.random() < 0.02:  # a pause either well inside or well past the server's quiet time
                        await asyncio.sleep(rng.choice([0.001, 0.01, 0.6]))
                if rng.random() < 0.5:
                    await call.done_writing()
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                pass  # the call ended while writing: its status says why
            code = (await call.code()).name
        codes[code] += 1
        TALLY.add(auth_refused_streams=1, auth_internal=int(code == "INTERNAL"))

    for _ in range(chaos.n(1, 5)):
        host = RunHost(tmp_path / f"hub{_}.sqlite")
        ingress = IngressService(HostIngest(host), known_event_ids=host.event_ids())
        server = await start_server(host, listen="127.0.0.1:0", token=token, ingress=ingress)
        try:
            left = FREE_FAILURES  # answered at once: the throttle's delays are the other test's
            while left:
                n = min(left, rng.randint(1, MAX_HELD_PER_PEER))  # never more at once than an address may have held
                await asyncio.gather(*(writer(server.address) for _ in range(n)))
                left -= n
        finally:
            await server.stop(None)
    assert set(codes) == {"UNAUTHENTICATED"}, f"{dict(codes)} {chaos.why(request.node.nodeid)}"
