"""Naming a stored run: its full id, or a unique prefix of 4+ characters (the rule ``ctl``,
``replay`` and ``resume`` follow, and every EventLog's ``resolve``)."""

from __future__ import annotations

from goldfive.errors import ReplayError

__all__ = ["match_run"]


def match_run(ids: list[str], ref: str, where: str) -> str:
    """The run ``ref`` names among ``ids``: its full id, or a unique prefix of 4+ characters
    (the rule ``ctl`` and ``resume`` follow)."""
    if ref in ids:
        return ref
    hits = [i for i in ids if i.startswith(ref)] if len(ref) >= 4 else []
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        shown = ", ".join(hits[:5]) + (", ..." if len(hits) > 5 else "")
        raise ReplayError(f"{ref!r} names more than one run in {where!r} ({shown}); give more of the id")
    known = ", ".join(ids[-5:])
    short = " (a prefix needs 4+ characters)" if len(ref) < 4 and any(i.startswith(ref) for i in ids) else ""
    raise ReplayError(f"no run {ref!r} in {where!r}{short}; recorded runs include {known}")
