"""The garbage collector of a long-lived hub process (``goldfive serve``).

A hub holds thousands of long-lived objects (runs, their folded state, connections, grpc
calls) and allocates many short-lived ones per event. With CPython's defaults (a young
collection every 700 net allocations) it runs a few collections per second under load, and
every older collection walks the whole long-lived heap; each one holds the event loop, so a
control waits behind it. ``tune_for_serving`` moves what exists once the hub has started (its
code, its stored runs' state) out of the collector's sight (``gc.freeze``: those objects are
never scanned again, nor freed by a collection: what is built at start lives as long as the
hub anyway) and collects the young generation less often.

Process-wide: only the ``goldfive serve`` command calls it, never the library's ``serve``
(a process that embeds a hub keeps its own collector settings).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

__all__ = ["SERVING_GEN0_THRESHOLD", "GcSettings", "restore", "tune_for_serving"]

#: Net allocations between young collections while serving (CPython's default is 700).
SERVING_GEN0_THRESHOLD = 20_000


@dataclass(frozen=True)
class GcSettings:
    """What ``tune_for_serving`` changed, for ``restore``."""

    threshold: tuple[int, int, int]
    frozen: int


def tune_for_serving(gen0: int = SERVING_GEN0_THRESHOLD) -> GcSettings:
    """Collect once, freeze every object alive now, and raise the young generation's threshold
    to ``gen0`` (the older generations' stay as they were). Returns the settings before."""
    if gen0 < 1:
        raise ValueError(f"gen0 threshold must be >= 1, got {gen0}")
    before = GcSettings(gc.get_threshold(), gc.get_freeze_count())
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = before.threshold
    gc.set_threshold(gen0, gen1, gen2)
    return before


def restore(settings: GcSettings) -> None:
    """Undo ``tune_for_serving``: the thresholds it replaced; the objects frozen since return to
    the collector (all of them: ``gc.unfreeze`` cannot tell whose they are, so it is only done
    when nothing was frozen before)."""
    gc.set_threshold(*settings.threshold)
    if settings.frozen == 0:
        gc.unfreeze()
