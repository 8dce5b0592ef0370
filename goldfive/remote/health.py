"""One line on what is wrong with a served run's recording, from its RunSummary (for ``ctl
runs``, ``ctl status`` and a TUI header); "" when nothing is."""

from __future__ import annotations

from goldfive.pb.goldfive.v1 import service_pb2

__all__ = ["health_note"]


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def health_note(summary: service_pb2.RunSummary) -> str:
    parts: list[str] = []
    if summary.write_error:
        parts.append(f"DEGRADED, not recording: {summary.write_error}; {_n(summary.unwritten_events, 'event')} unwritten")
    if summary.dropped_events:
        parts.append(f"{_n(summary.dropped_events, 'unwritten event')} dropped")
    if summary.damaged_events:
        parts.append(f"history damaged: {_n(summary.damaged_events, 'unreadable event')} skipped")
    if summary.history_error:
        parts.append(f"history damaged: {summary.history_error}")
    return "; ".join(parts)
