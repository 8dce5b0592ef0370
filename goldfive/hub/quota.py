"""What one runner credential may use of a hub: runs, lanes, events per second, event size.

A runner token may only publish runs, but without a bound that is enough to exhaust a hub
(events of several megabytes held for watchers, thousands of runs made by hellos alone). The
limits are per credential (its name), set with ``goldfive serve --runner-limits``; an
operator's connections count too. Too many runs or lanes is refused (RESOURCE_EXHAUSTED, with
a sentence); too many events per second is slowed, not refused: the hub stops reading that
credential's streams until its budget refills, so gRPC's flow control holds the runner back
and nothing is lost.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, fields

from goldfive.errors import ServeConfigError
from goldfive.hub.limits import MAX_EVENT_BYTES
from goldfive.link.wire import LARGEST_EVENT_BYTES

__all__ = ["Quotas", "RunnerLimits"]


@dataclass(frozen=True)
class RunnerLimits:
    #: Runs one credential may have connected at once.
    runs: int = 5_000
    #: Lanes one ConnectShared stream may have open at once.
    lanes: int = 5_000
    #: Events per second one credential may send (a burst of one second's worth).
    events: int = 200_000
    #: The largest event, in serialized bytes.
    event_bytes: int = MAX_EVENT_BYTES

    def __post_init__(self) -> None:
        """Limits made in code are checked as ``--runner-limits`` is: each a positive whole
        number, and no event larger than one message to a hub can carry (ValueError)."""
        for f in fields(self):
            n = getattr(self, f.name)
            if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
                raise ValueError(f"RunnerLimits.{f.name} must be a positive whole number, got {n!r}")
        if self.event_bytes > LARGEST_EVENT_BYTES:  # gRPC would refuse such an event before the hub's check
            raise ValueError(f"RunnerLimits.event_bytes must be at most {LARGEST_EVENT_BYTES} (what one message to a hub carries), got {self.event_bytes}")

    @classmethod
    def parse(cls, text: str) -> RunnerLimits:
        """``runs=N,lanes=N,events=N,event-bytes=N`` (any of them; the rest keep their
        defaults). ServeConfigError says what is wrong, in one line."""
        known = {f.name.replace("_", "-"): f.name for f in fields(cls)}
        values: dict[str, int] = {}
        for item in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = item.partition("=")
            name = known.get(key.strip())
            if not sep or name is None:
                raise ServeConfigError(f"--runner-limits: {item!r} is not one of {', '.join(f'{k}=N' for k in known)}")
            try:
                n = int(value.strip().replace("_", ""))
            except ValueError:
                raise ServeConfigError(f"--runner-limits: {key.strip()} must be a whole number, got {value.strip()!r}") from None
            if n <= 0:
                raise ServeConfigError(f"--runner-limits: {key.strip()} must be positive, got {n}")
            if name == "event_bytes" and n > LARGEST_EVENT_BYTES:  # gRPC would refuse it before the hub's check
                raise ServeConfigError(
                    f"--runner-limits: event-bytes must be at most {LARGEST_EVENT_BYTES} (what one message to a hub carries), got {n}"
                )
            values[name] = n
        return cls(**values)


class _Bucket:
    """A token bucket of ``rate`` per second holding at most one second's worth."""

    def __init__(self, rate: float, now: float) -> None:
        self.rate = rate
        self.tokens = rate
        self.at = now

    def wait_for(self, n: int, now: float) -> float:
        """Spend ``n``; how long to wait before the spending is within the rate."""
        self.tokens = min(self.rate, self.tokens + (now - self.at) * self.rate) - n
        self.at = now
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


class Quotas:
    """The hub's account of what each credential uses now."""

    def __init__(self, limits: RunnerLimits | None = None) -> None:
        self.limits = limits or RunnerLimits()
        self._runs: Counter[str] = Counter()
        self._buckets: dict[str, _Bucket] = {}
        #: Seconds streams were held back for going over their rate (the hub's health).
        self.throttled_seconds = 0.0

    def admit_run(self, who: str) -> str:
        """Count one more connected run for ``who``; why not (nothing counted), or ""."""
        if self._runs[who] >= self.limits.runs:
            name = f"token {who!r}" if who else "this hub's connections"
            return f"{name} has {self._runs[who]:,} runs connected, the most this hub allows (--runner-limits runs=...)"
        self._runs[who] += 1
        return ""

    def release_run(self, who: str) -> None:
        if self._runs[who] > 0:
            self._runs[who] -= 1
            if not self._runs[who]:
                del self._runs[who]

    def lane_problem(self, open_lanes: int) -> str:
        if open_lanes >= self.limits.lanes:
            return f"this stream has {open_lanes:,} lanes open, the most this hub allows on one (--runner-limits lanes=...)"
        return ""

    async def spend(self, who: str, events: int) -> None:
        """``who`` sent ``events`` events: returns at once within its rate, else after the
        wait that brings it back within it."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        bucket = self._buckets.get(who)
        if bucket is None:
            bucket = self._buckets[who] = _Bucket(float(self.limits.events), now)
        wait = bucket.wait_for(events, now)
        if wait > 0:
            self.throttled_seconds += wait
            await asyncio.sleep(wait)
