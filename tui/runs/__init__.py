"""The runs screen's data: many runs (in this process or on a hub), what needs a person."""

from .local import InProcessRuns
from .model import RunRow, RunsSource, Snapshot, WaitingItem
from .remote import RemoteRuns

__all__ = ["InProcessRuns", "RemoteRuns", "RunRow", "RunsSource", "Snapshot", "WaitingItem"]
