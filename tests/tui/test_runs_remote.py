"""The runs screen over a real ``goldfive serve`` on 127.0.0.1 (port 0): rows, the waiting
queue (GetRun's pending approvals while the hub has no ListWaiting), approving from it, and
opening a run through the gRPC source; ``attach ADDR`` without --run-id opens the runs screen."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from click.testing import CliRunner

from goldfive.cli import FRONTENDS, main
from goldfive.remote.launch import demo_run as _demo_run
from goldfive.control import AckResult
from goldfive.remote.host import RunHost
from goldfive.remote.server import start_server
from goldfive.testing import until
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.runs.remote import RemoteRuns
from goldfive_tui.screens.runs import RunsScreen

from tests.remote_fixtures import Gate, gated_factory


_until = functools.partial(until, what="the runs screen against the hub", timeout=30.0)


async def test_remote_runs_list_wait_and_approve_against_a_real_server(tmp_path: Path) -> None:
    await _list_wait_and_approve(tmp_path, list_waiting=True)


async def test_remote_runs_fall_back_to_get_run_on_a_server_without_list_waiting(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import grpc

    from goldfive.remote.service import RunsService

    async def unimplemented(self, request, context):  # type: ignore[no-untyped-def]
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not implemented!")

    monkeypatch.setattr(RunsService, "ListWaiting", unimplemented)  # a server older than the hub
    await _list_wait_and_approve(tmp_path, list_waiting=False)


async def _list_wait_and_approve(tmp_path: Path, *, list_waiting: bool) -> None:
    host = RunHost(str(tmp_path / "runs.sqlite"))
    gate = Gate()
    demo = host.start_run(_demo_run(40.0)[0], "build me a slide deck about Python", run_id="demo0001aaaa")
    host.start_run(gated_factory(gate), "gated", run_id="gate0002bbbb")
    server = await start_server(host, listen="127.0.0.1:0")
    runs = RemoteRuns(server.address)
    try:
        await runs.start()

        async def waiting() -> bool:
            return bool((await runs.poll()).waiting)

        await _until(waiting)
        snap = await runs.poll()
        assert runs.has_list_waiting is list_waiting
        (item,) = snap.waiting
        assert (item.run_id, item.kind, item.tool_name) == (demo.run_id, "approval", "publish_deck")
        rows = {r.run_id: r for r in snap.rows}
        assert rows[demo.run_id].needs_kind == "approval" and "publish_deck" in rows[demo.run_id].needs_reason
        assert rows["gate0002bbbb"].needs_kind == "" and rows["gate0002bbbb"].origin == "hosted"
        ack = await runs.decide(item, True)
        assert ack.result == AckResult.SUCCESS

        async def answered() -> bool:
            return not (await runs.poll()).waiting

        await _until(answered)
    finally:
        gate.open()
        await runs.stop()
        await server.stop(0)


async def test_hub_app_opens_a_served_run_through_grpc(tmp_path: Path) -> None:
    host = RunHost(str(tmp_path / "runs.sqlite"))
    gate = Gate()
    host.start_run(gated_factory(gate), "gated", run_id="gate0002bbbb")
    server = await start_server(host, listen="127.0.0.1:0")
    hub = RunsScreen(RemoteRuns(server.address), poll_s=3600, osc=False)
    app = GoldfiveApp(hub, cursor_blink=False)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await gate.entered.wait()
            await hub.poll()
            await pilot.pause()
            assert [r.run_id for r in hub.rows] == ["gate0002bbbb"]
            await pilot.press("enter")
            for _ in range(200):
                await pilot.pause(0.02)
                if hub.run_screen is not None and hub.run_screen.state.run_id:
                    break
            assert hub.run_screen is not None
            assert hub.open_run_id == "gate0002bbbb" and hub.run_screen.state.run_id == "gate0002bbbb"
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, RunsScreen)
    finally:
        gate.open()
        await server.stop(0)


def test_attach_without_run_id_opens_the_runs_screen(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    opened: list[tuple[str, object, dict]] = []  # type: ignore[type-arg]
    monkeypatch.setitem(FRONTENDS, "attach", lambda addr, run_id, **kw: opened.append((addr, run_id, kw)) or 0)

    async def up() -> tuple[object, str]:
        server = await start_server(RunHost(str(tmp_path / "runs.sqlite")), listen="127.0.0.1:0")
        return server, server.address

    loop = asyncio.new_event_loop()
    server, addr = loop.run_until_complete(up())
    try:
        import threading

        t = threading.Thread(target=loop.run_forever, daemon=True)
        t.start()
        result = CliRunner().invoke(main, ["attach", addr, "--notify-cmd", "cat > /dev/null"])
        assert result.exit_code == 0, result.output
        assert opened == [(addr, None, {"token": None, "tls_ca": None, "notify_cmd": "cat > /dev/null", "notify_after": "-1"})]
        bad = CliRunner().invoke(main, ["attach", addr, "--notify-cmd", " "])
        assert bad.exit_code == 2 and bad.output.strip() == "goldfive attach: error: --notify-cmd needs a command"
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(0), loop).result(10)  # type: ignore[attr-defined]
        loop.call_soon_threadsafe(loop.stop)


def test_a_finished_connected_run_shows_its_end_not_its_gone_runner() -> None:
    from goldfive.pb.goldfive.v1 import service_pb2
    from goldfive_tui.runs.remote import row_from_summary

    done = service_pb2.RunSummary(run_id="r1", state="COMPLETED", origin="connected", connection="disconnected")
    live = service_pb2.RunSummary(run_id="r2", state="RUNNING", origin="connected", connection="disconnected")
    assert row_from_summary(done, []).state == "COMPLETED"
    assert row_from_summary(live, []).state == "DISCONNECTED"


async def test_the_runs_screen_keeps_its_list_while_the_hub_is_away_and_reconnects(tmp_path: Path) -> None:
    """The hub going away once emptied the list (issue 23 item 9): it stays, marked
    disconnected and dimmed, and is live again when a hub answers on the address."""
    host = RunHost(str(tmp_path / "runs.sqlite"))
    gate = Gate()
    host.start_run(gated_factory(gate), "gated", run_id="gate0002bbbb")
    server = await start_server(host, listen="127.0.0.1:0")
    addr = server.address
    runs = RemoteRuns(addr)
    screen = RunsScreen(runs, poll_s=60.0)
    app = GoldfiveApp(screen, cursor_blink=False)
    again = None
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await _until(lambda: _true(bool(screen.snapshot.rows)))
            assert [r.run_id for r in screen.snapshot.rows] == ["gate0002bbbb"]
            await server.stop(0)
            snap = await screen.poll()
            await pilot.pause()
            assert [r.run_id for r in snap.rows] == ["gate0002bbbb"] and snap.disconnected
            assert f"nothing answers at {addr}" in snap.problem or f"connection to {addr} was lost" in snap.problem
            assert "retrying" in snap.problem and "UNAVAILABLE" not in snap.problem
            assert "DISCONNECTED" in str(screen.query_one("#runs-title").render())
            from goldfive_tui.runs.table import RunsTable

            assert screen.query_one(RunsTable).has_class("-disconnected")
            host2 = RunHost(str(tmp_path / "runs2.sqlite"))
            host2.start_run(gated_factory(gate), "gated", run_id="gate0003cccc")
            again = await start_server(host2, listen=addr)  # a hub is back on the address

            async def back() -> bool:
                return not (await screen.poll()).disconnected

            await _until(back, timeout=20)
            await pilot.pause()
            assert not screen.query_one(RunsTable).has_class("-disconnected")
            assert [r.run_id for r in screen.snapshot.rows] == ["gate0003cccc"]  # its list, live
    finally:
        gate.open()
        await runs.stop()
        if again is not None:
            await again.stop(0)


async def _true(value: bool) -> bool:
    return value


async def test_s_on_the_runs_screen_starts_a_run_on_the_hub_as_ctl_start_does(tmp_path: Path) -> None:
    from goldfive_tui.screens.dialogs import StartRunScreen
    from textual.widgets import Input

    from tests.tui.conftest import screen_text

    host = RunHost(str(tmp_path / "runs.sqlite"))
    server = await start_server(host, listen="127.0.0.1:0")
    hub = RunsScreen(RemoteRuns(server.address), poll_s=3600, osc=False)
    app = GoldfiveApp(hub, cursor_blink=False)
    try:
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await hub.poll()
            await pilot.pause()
            assert hub.rows == []
            await pilot.press("s")
            await pilot.pause()
            assert isinstance(app.screen, StartRunScreen)
            await pilot.press("ctrl+a", "ctrl+k", *"mymod", "enter")  # not MODULE:FUNCTION: said, nothing starts
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            assert "is not demo or MODULE:FUNCTION" in screen_text(app) and not host.runs()
            # a module the hub cannot import: said in the dialog, which keeps what was typed (the
            # trial: the dialog closed and a toast said "INVALID_ARGUMENT: cannot import ...")
            await pilot.press("shift+tab", "ctrl+a", "ctrl+k", *"nosuchmod_23:agent", "enter", *"a goal", "enter")
            for _ in range(200):
                await pilot.pause(0.02)
                if "not started" in screen_text(app):
                    break
            text = screen_text(app)
            assert isinstance(app.screen, StartRunScreen) and not host.runs()
            assert "not started: cannot import module 'nosuchmod_23'" in text and "INVALID_ARGUMENT" not in text, text
            assert app.screen.query_one("#start-agent", Input).value == "nosuchmod_23:agent"
            await pilot.press("shift+tab", "ctrl+a", "ctrl+k", *"demo", "enter")
            for _ in range(200):
                await pilot.pause(0.02)
                if hub.rows:
                    break
            assert isinstance(app.screen, RunsScreen) and len(hub.rows) == 1 and len(host.runs()) == 1
            assert "build me a slide deck" in hub.rows[0].goal
    finally:
        await server.stop(0)
