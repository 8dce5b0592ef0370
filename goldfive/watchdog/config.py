"""The watchdog's thresholds (``goldfive.settings.watchdog_config`` reads them from the
environment for the command line; a program passes its own in ``RuntimeConfig.watchdog``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["WatchdogConfig"]


@dataclass(frozen=True)
class WatchdogConfig:
    enabled: bool = True
    #: The same tool with the same arguments this many times in a task (counted since the
    #: task's last progress note that said something new) is a loop.
    repeat_calls: int = 5
    #: Two calls taking turns (A-B-A-B...) this many times each is a ping-pong.
    ping_pong_cycles: int = 3
    #: Model calls that go on this long with no tool call and no progress are a stall.
    stall_s: float = 120.0
    #: ...and at least this many of them (one slow answer is not a stall).
    stall_model_calls: int = 3
    #: The same model answer (the same words) this many times in a task.
    repeat_outputs: int = 3
    #: A task running this many times its predicted duration (tasks with a prediction only).
    timeout_factor: float = 3.0
    #: How many pieces of evidence a drift carries at most (the newest).
    max_evidence: int = 12

    def __post_init__(self) -> None:
        for name in ("repeat_calls", "ping_pong_cycles", "stall_model_calls", "repeat_outputs", "max_evidence"):
            if getattr(self, name) < 1:
                raise ValueError(f"watchdog {name} must be at least 1, got {getattr(self, name)}")
        if self.ping_pong_cycles < 2:
            raise ValueError(f"watchdog ping_pong_cycles must be at least 2, got {self.ping_pong_cycles}")
        if not self.stall_s > 0 or not self.timeout_factor > 1:
            raise ValueError("watchdog stall_s must be positive and timeout_factor above 1")
