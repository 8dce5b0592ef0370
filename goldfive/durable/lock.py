"""The run lock of a SQLite recording, now in the store with the log it locks
(:mod:`goldfive.store.locks`); importable from here as before."""

from goldfive.store.locks import LockHolder, RunLocked, RunRecording, drop, ensure_table, holder, take

__all__ = ["LockHolder", "RunLocked", "RunRecording", "drop", "ensure_table", "holder", "take"]
