"""``goldfive demo --runs 3``: the runs screen over three in-process demo runs, no network."""

from __future__ import annotations

import asyncio

from click.testing import CliRunner

from goldfive.cli import FRONTENDS, main
from goldfive_tui.app import GoldfiveApp
from goldfive_tui.runs.launch import demo_runs
from goldfive_tui.screens.runs import RunsScreen
from goldfive_tui.screens.dialogs import ConfirmScreen


async def test_demo_runs_three_different_runs_and_one_soon_needs_you() -> None:
    runs = demo_runs(3, speed=20.0, run_ids=["aaaa0001", "bbbb0002", "cccc0003"])
    hub = RunsScreen(runs, poll_s=0.1, osc=False)
    app = GoldfiveApp(hub, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(300):
            await asyncio.sleep(0.05)
            if any(r.needs_kind == "approval" for r in hub.snapshot.rows):
                break
        await pilot.pause()
        rows = hub.rows
        assert len(rows) == 3 and len({r.goal for r in rows}) == 3
        assert rows[0].needs_kind == "approval" and rows[0].run_id == "aaaa0001"  # the fast deck, first
        assert [n.run_id for n in hub.announcer.notices][:1] == ["aaaa0001"]
        await pilot.press("q")  # live runs of this process: asks before cancelling them
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
    await runs.stop()


def test_demo_runs_cli_opens_the_runs_front_end(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[dict] = []  # type: ignore[type-arg]
    monkeypatch.setitem(FRONTENDS, "demo", lambda **kw: calls.append(kw) or 0)
    result = CliRunner().invoke(main, ["demo", "--runs", "3"])
    assert result.exit_code == 0, result.output
    assert calls == [{"runs": 3, "speed": 1.0}]
    refused = CliRunner().invoke(main, ["demo", "--runs", "3", "--headless"])
    assert refused.exit_code == 2 and "--runs" in refused.output and "--headless" in refused.output
    assert CliRunner().invoke(main, ["demo", "--runs", "0"]).exit_code == 2


async def test_demo_runs_are_recorded_so_replay_lists_them(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from goldfive.sinks.sqlite import list_runs

    db = tmp_path / "runs.sqlite"
    runs = demo_runs(2, speed=20.0, run_ids=["aaaa0001", "bbbb0002"], record_to=str(db))
    await runs.start()
    try:
        for _ in range(300):
            await asyncio.sleep(0.05)
            snap = await runs.poll()
            if any(r.needs_kind == "approval" for r in snap.rows):
                break
    finally:
        await runs.stop()
    assert {r.run_id for r in await asyncio.to_thread(list_runs, db)} == {"aaaa0001", "bbbb0002"}
