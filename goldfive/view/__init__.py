"""What a watcher sees of a run: the one reducer (``RunState``) that folds a run's events into
a model, used live by the TUI, by replay and by the server's snapshots."""

from goldfive.view.models import ApprovalView, ControlView, DriftView, RunPhase, TaskView, summarize_payload
from goldfive.view.state import RunState

__all__ = ["ApprovalView", "ControlView", "DriftView", "RunPhase", "RunState", "TaskView", "summarize_payload"]
