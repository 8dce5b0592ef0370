"""A watchdog for stalls and loops: detectors over a run's event stream that raise drifts
with their evidence through the intervention ladder (a warning, a nudge, a pause)."""

from goldfive.watchdog.config import WatchdogConfig
from goldfive.watchdog.detectors import Finding, Step, TaskWatch
from goldfive.watchdog.watchdog import SEVERITY_STEPS, Watchdog

__all__ = ["SEVERITY_STEPS", "Finding", "Step", "TaskWatch", "Watchdog", "WatchdogConfig"]
