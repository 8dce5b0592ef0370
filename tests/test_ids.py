"""Random ids read in batches (goldfive.ids): each handed out once, also across a fork."""

from __future__ import annotations

import os
import sys

import pytest

from goldfive.control import ControlMessage
from goldfive.ids import random_hex
from goldfive.types import DriftEvent, DriftKind, DriftSeverity


def test_ids_are_32_hex_digits_and_never_repeat_across_batches() -> None:
    ids = [random_hex() for _ in range(1000)]  # several batches
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_controls_and_drifts_get_their_ids_in_the_old_form() -> None:
    assert len(ControlMessage("PAUSE").id) == 32 and ControlMessage("PAUSE").id != ControlMessage("PAUSE").id
    drift = DriftEvent(DriftKind.CUSTOM, DriftSeverity.INFO)
    assert len(drift.id) == 16 and int(drift.id, 16) >= 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_never_hands_out_an_id_its_parent_holds() -> None:
    random_hex()  # the parent holds a batch now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its first id, then out without running anything of pytest's
        try:
            os.write(write, random_hex().encode())
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert len(child) == 32
    assert child != random_hex(), "the child handed out the id its parent had next"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
