"""Snapshots of the main states, grouped by screen. Baselines change only after a look."""

from __future__ import annotations

from typing import Awaitable, Callable

from textual.pilot import Pilot

from tests.tui.conftest import make_rig, settle

SIZE = (120, 40)


def snap(snap_compare, stage: str, keys: tuple[str, ...] = (), size: tuple[int, int] = SIZE) -> bool:  # type: ignore[no-untyped-def]
    """Run the demo story to ``stage``, press ``keys`` (waiting for the run's reaction after
    each), then compare the screen."""
    rig = make_rig(stage, cursor_blink=False)

    async def run_before(pilot: Pilot) -> None:
        await settle(rig, pilot)
        for key in keys:
            await pilot.press(key)
            await settle(rig, pilot)

    before: Callable[[Pilot], Awaitable[None]] = run_before
    return snap_compare(rig.app, terminal_size=size, run_before=before)


# -- main screen ------------------------------------------------------------------------------


def test_running(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "opening")


def test_paused(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "opening", ("p",))


def test_after_steer_shows_the_revised_plan(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "opening", ("s", *"focus on fewer, higher-quality slides", "ctrl+s"))


def test_approval_pending(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "approval", ("tab", "tab", "tab"))


def test_after_approving(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "approval", ("a", "a"))  # the first a opens the unread approval


def test_completed(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "finished")


def test_small_terminal_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "approval", size=(80, 24))


# -- dialogs ----------------------------------------------------------------------------------


def test_steer_input_open(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "opening", ("s", *"fewer slides"))


def test_steer_refuses_an_empty_note(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "opening", ("s", "ctrl+s"))


def test_rewind_confirmation(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "approval", ("down", "w"))


def test_help(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap(snap_compare, "opening", ("question_mark",))
