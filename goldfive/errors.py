"""The one exception tree: everything goldfive raises derives from GoldfiveError."""

from __future__ import annotations


def one_line(exc: BaseException) -> str:
    """An error's message as one line (each run of whitespace one space), or its type's name
    when it has no message: how goldfive quotes an exception in a log line or an event."""
    return " ".join(str(exc).split()) or type(exc).__name__


def printable_line(exc: BaseException, limit: int = 200) -> str:
    """An error's message as one printable line of at most ``limit`` characters (then "..."):
    for messages that may carry any bytes, such as SQLite's about a damaged page."""
    text = " ".join(str(exc).split())
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[:limit] + "..."


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


class ResumeRefused(GoldfiveError):
    """``resume`` will not continue this run; the message says why, in one line (also
    importable from goldfive.durable.store, where it was first)."""


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
        self.reason = message
        super().__init__(f"{code}: {message}" if message else code)

    def in_words(self, addr: str) -> str:
        """One sentence for a person: what went wrong with the server at ``addr`` and what to
        do, never gRPC's own wording. The one place that turns gRPC errors into words (ctl,
        the runs screen, attach)."""
        code, why = self.code, self.reason
        low = why.lower()
        if code == "UNAVAILABLE":
            if any(w in low for w in ("ssl", "tls", "handshake", "certificate")):
                return f"the TLS handshake with {addr} failed: check --tls-ca (the hub's CA) and whether that server serves TLS"
            if any(w in low for w in ("resolving", "domain name not found", "name or service not known", "dns resolution failed")):
                return f"cannot find the host of {addr} (its name does not resolve): check the address (HOST:PORT)"
            if any(w in low for w in ("failed to connect", "connection refused", "connect failed", "dns", "resolve", "unreachable")):
                return f"nothing answers at {addr}: is a hub running there (goldfive serve --listen {addr})? Check the address and port"
            return f"the connection to {addr} was lost: try again once the hub is back"
        if code == "DEADLINE_EXCEEDED":
            return f"{addr} did not answer in time: is the address right, and is the hub running and not overloaded?"
        if code == "UNAUTHENTICATED":
            if "missing token" in low:
                return f"{addr} needs a token: give it with --token-file FILE (or --token, or GOLDFIVE_TOKEN)"
            return f"{addr} refused the token: check --token-file / --token / GOLDFIVE_TOKEN against the hub's tokens"
        return f"{addr}: {self}"  # the server's own sentence, after its code


class ServeConfigError(GoldfiveError, ValueError):
    """``goldfive serve`` was configured in a way it refuses to start with."""


class DamagedStoreError(GoldfiveError):
    """A recording database failed its integrity check (``PRAGMA quick_check``)."""
