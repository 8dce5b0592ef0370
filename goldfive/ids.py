"""Random ids (a control's, a drift's) from the operating system's random source, read in
batches: ``os.urandom`` is a system call (about a microsecond here, more under load), and a
STATUS_QUERY made two of them, one for the control's id and one for its drift's.

Each id is as random as ``os.urandom(16).hex()``: 128 bits the kernel gave, used once. The
batch is a list of finished ids handed out with ``list.pop`` (one step under the GIL, so two
threads never get the same id), refilled when empty, and emptied in a forked child, which
must not hand out the ids its parent holds.
"""

from __future__ import annotations

import os

__all__ = ["random_hex"]

#: Ids read per system call.
_BATCH = 64

_ids: list[str] = []


#: Where each id of a batch starts and ends in its hex text, made once: a refill cuts the
#: text with ``map`` (in C), not a loop of Python steps per id.
_CUTS = [slice(i, i + 32) for i in range(0, 32 * _BATCH, 32)]


def _refill() -> None:
    _ids.extend(map(os.urandom(16 * _BATCH).hex().__getitem__, _CUTS))


def random_hex() -> str:
    """32 hex digits of the operating system's random source (``uuid4().hex``'s form)."""
    try:
        return _ids.pop()
    except IndexError:
        _refill()
        return _ids.pop()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_ids.clear)
