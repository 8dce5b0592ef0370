"""The one exception tree: everything goldfive raises derives from GoldfiveError."""

from __future__ import annotations


class GoldfiveError(Exception):
    """Base of every error goldfive raises."""


class PlanValidationError(GoldfiveError, ValueError):
    """A plan breaks a structural rule. ``rule`` names it, ``ids`` are the offenders."""

    def __init__(self, rule: str, ids: list[str] | tuple[str, ...] = (), message: str = "") -> None:
        self.rule = rule
        self.ids = tuple(ids)
        text = message or (f"{rule}: {', '.join(self.ids)}" if self.ids else rule)
        super().__init__(text)


class ChannelClosedError(GoldfiveError):
    """``send`` on a ControlChannel that was closed by its owner."""


class InvalidTransitionError(GoldfiveError):
    """A task status change the state machine does not allow."""


class UnknownTaskError(GoldfiveError, KeyError):
    """A task id that the current plan does not contain."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "unknown task"


class ConversionError(GoldfiveError, ValueError):
    """A protobuf message that cannot be converted to goldfive's dataclasses."""


class ControlPayloadError(GoldfiveError, ValueError):
    """A control's payload does not fit its kind. ``key`` names the payload field ("" for the
    payload as a whole); the message says what was expected."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


class SinkError(GoldfiveError):
    """A sink could not accept or persist an event."""


class DuplicateEventError(SinkError):
    """A persistence sink already holds an event with this (run_id, sequence)."""


class RecordingConflictError(DuplicateEventError):
    """Another process writes the recording of a run this process is running (its rows were
    refused as duplicates, or its lock is held): this process stops the run and writes no
    more of it. ``run_ids`` names the runs."""

    def __init__(self, message: str, run_ids: frozenset[str] = frozenset()) -> None:
        super().__init__(message)
        self.run_ids = run_ids


class ReplayError(GoldfiveError):
    """A recording could not be read."""


class LLMError(GoldfiveError):
    """A model call failed: unreachable server, bad status, or an unusable answer."""


class PlannerError(GoldfiveError):
    """A planner could not produce a valid plan."""


class GoalDerivationError(GoldfiveError):
    """A goal deriver could not produce goals."""


class RemoteError(GoldfiveError):
    """A gRPC call to a goldfive server failed. ``code`` is the gRPC status name
    (``"UNAVAILABLE"``, ``"NOT_FOUND"``, ...) and the message is the server's reason."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(f"{code}: {message}" if message else code)


class ServeConfigError(GoldfiveError, ValueError):
    """``goldfive serve`` was configured in a way it refuses to start with."""


class DamagedStoreError(GoldfiveError):
    """A recording database failed its integrity check (``PRAGMA quick_check``)."""
