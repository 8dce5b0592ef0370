"""Snapshots of the runs screen and the waiting queue (fixed ids and clock). Baselines change
only after a look at the picture."""

from __future__ import annotations

from textual.pilot import Pilot

from tests.tui.runs_kit import hub_of, make_hub


def _snap(snap_compare, keys: tuple[str, ...] = (), size: tuple[int, int] = (80, 24)) -> bool:  # type: ignore[no-untyped-def]
    app = make_hub("done", "running", "paused", "failed", "approval", "escalation")

    async def before(pilot: Pilot) -> None:
        await pilot.pause()
        await hub_of(app).poll()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()

    return snap_compare(app, terminal_size=size, run_before=before)


def test_runs_screen_with_runs_that_need_you_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert _snap(snap_compare)


def test_runs_screen_120x30(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert _snap(snap_compare, size=(120, 30))


def test_waiting_queue(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert _snap(snap_compare, ("w",))
