"""The detectors: what one task's stream of steps looks like when it is stuck.

``TaskWatch`` holds one running task's recent steps and answers each new one with the
``Finding`` it completes, if any. It does bounded work per step (dictionary updates and a look
at the last few calls), knows nothing of events or asyncio, and is driven with explicit times,
so tests can drive it step by step.

Each detector fires at its threshold and again at every further multiple of it (5, 10, 15
identical calls), so a task that stays stuck keeps producing findings and the ladder climbs:
the watchdog raises the first as a warning, the next as a nudge, then a pause.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TypeVar

from goldfive.types import DriftEvidence, DriftKind
from goldfive.watchdog.config import WatchdogConfig

__all__ = ["DISTINCT", "Finding", "Step", "TaskWatch"]

_K = TypeVar("_K", tuple[str, str], bytes)

_RECENT = 64
#: How many different calls (and different answers) a task remembers. One not seen again
#: while this many others came after it is forgotten (its count starts again), so a long
#: task holds a bounded amount however many different calls it makes; a loop comes back to
#: its call far sooner than this.
DISTINCT = 1024
#: The characters of a step's text its evidence shows.
EVIDENCE_TEXT = 200


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the task did, as the watchdog keeps it."""

    at_ms: int
    sequence: int
    #: "tool_call", "model_output", "model_call", "progress", "task_started".
    what: str
    tool_name: str = ""
    call_id: str = ""
    args_json: str = ""
    text: str = ""

    def evidence(self) -> DriftEvidence:
        return DriftEvidence(self.at_ms, self.what, self.tool_name, self.call_id, self.args_json, self.text[:EVIDENCE_TEXT], self.sequence)


@dataclass(frozen=True, slots=True)
class Finding:
    """A detector's verdict: the drift kind, one line a person reads, and what it saw."""

    kind: DriftKind
    #: "repeat_calls", "ping_pong", "stall", "repeat_outputs", "timeout".
    detector: str
    task_id: str
    detail: str
    evidence: tuple[DriftEvidence, ...]


class _Seen(deque[Step]):
    """The newest steps of one call (or answer), as many as its evidence shows, and how many
    there were in all."""

    __slots__ = ("n",)
    n: int


def _count(seen: dict[_K, _Seen], key: _K, step: Step, keep: int) -> _Seen:
    """``step`` counted under ``key``; ``seen`` is in least-recently-seen order (a key seen
    again moves to the end) and forgets its first key when a new one would pass DISTINCT."""
    same = seen.pop(key, None)
    if same is None:  # a call not seen before in this task (the usual case)
        if len(seen) >= DISTINCT:
            del seen[next(iter(seen))]
        same = _Seen((step,), keep)
        same.n = 1
    else:
        same.append(step)
        same.n += 1
    seen[key] = same
    return same


def _digest(text: str) -> bytes:
    return hashlib.blake2b(" ".join(text.lower().split()).encode(), digest_size=12).digest()


@dataclass
class TaskWatch:
    task_id: str
    config: WatchdogConfig
    started_ms: int
    #: The task's predicted duration (0: none, no timeout is watched).
    predicted_ms: int = 0
    last_progress_note: str = ""
    last_fraction: float = -1.0
    #: The last tool call or progress (model calls after it are what a stall is made of).
    last_activity_ms: int = 0
    #: Each different call (tool, arguments) and answer (its words' digest): how many, the
    #: newest as evidence; the DISTINCT most recently seen only.
    _same: dict[tuple[str, str], _Seen] = field(default_factory=dict)
    _calls: deque[Step] = field(default_factory=lambda: deque(maxlen=_RECENT))
    _outputs: dict[bytes, _Seen] = field(default_factory=dict)
    _model_calls: list[Step] = field(default_factory=list)
    #: The framework reports its model turns (agent_step): usage events are not counted too.
    _saw_outputs: bool = False
    _ping_pong_fired: int = 0
    _stalls_fired: int = 0
    timeouts_fired: int = 0

    def __post_init__(self) -> None:
        self.last_activity_ms = self.started_ms

    # -- steps --------------------------------------------------------------------------
    def tool_call(self, step: Step) -> list[Finding]:
        found: list[Finding] = []
        self.last_activity_ms = step.at_ms
        if self._model_calls:
            self._model_calls.clear()
        same = _count(self._same, (step.tool_name, step.args_json), step, self.config.max_evidence)
        if same.n % self.config.repeat_calls == 0:
            found.append(
                Finding(
                    DriftKind.LOOPING_TOOL_CALL, "repeat_calls", self.task_id,
                    f"looks stuck: {step.tool_name} called {same.n} times with the same arguments",
                    self._evidence(same),
                )  # fmt: skip
            )
        calls = self._calls
        calls.append(step)
        # An A-B-A-B run ends with the same call as two before it (every call of a task that
        # is not looping differs from it): only then is the run of calls looked at.
        if len(calls) >= 3:
            before = calls[-3]
            if before.tool_name == step.tool_name and before.args_json == step.args_json:
                pong = self._ping_pong()
                if pong is not None:
                    found.append(pong)
        return found

    def model_output(self, step: Step) -> list[Finding]:
        """A model answer (a step the framework reported)."""
        self._saw_outputs = True
        found = self._model_call(step)
        if not step.text.strip():
            return found
        same = _count(self._outputs, _digest(step.text), step, self.config.max_evidence)
        if same.n % self.config.repeat_outputs == 0:
            words = " ".join(step.text.split())
            found.append(
                Finding(
                    DriftKind.LOOPING_REASONING, "repeat_outputs", self.task_id,
                    f"looks stuck: the model gave the same answer {same.n} times: \"{words[:80]}\"",
                    self._evidence(same),
                )  # fmt: skip
            )
        return found

    def model_call(self, step: Step) -> list[Finding]:
        """A model call seen through its usage: counted when the framework reports no turns."""
        return [] if self._saw_outputs else self._model_call(step)

    def _model_call(self, step: Step) -> list[Finding]:
        self._model_calls.append(step)
        if len(self._model_calls) > _RECENT:
            del self._model_calls[0]
        quiet_ms = step.at_ms - self.last_activity_ms
        stall_ms = self.config.stall_s * 1000
        if quiet_ms < stall_ms * (self._stalls_fired + 1) or len(self._model_calls) < self.config.stall_model_calls:
            return []
        self._stalls_fired += 1
        since = "its start" if self.last_activity_ms == self.started_ms else "the last tool call or progress"
        return [
            Finding(
                DriftKind.UNCERTAIN_PROGRESS, "stall", self.task_id,
                f"looks stalled: {len(self._model_calls)} model calls in {quiet_ms / 1000:.0f}s since {since}, "
                "no tool call and no progress",
                self._evidence(self._model_calls),
            )  # fmt: skip
        ]

    def progress(self, step: Step, fraction: float) -> None:
        """A progress note: new words (or a higher fraction) are progress; the loop counts
        start again. The same note again is not progress."""
        self.progress_note(step.at_ms, step.text, fraction)

    def progress_note(self, at_ms: int, text: str, fraction: float) -> None:
        """``progress`` without a Step: a note is not kept as evidence, and a task that
        reports progress often (every event of a busy run) pays for none."""
        if text == self.last_progress_note and fraction <= self.last_fraction:
            return
        self.last_progress_note = text
        if fraction > self.last_fraction:
            self.last_fraction = fraction
        self.last_activity_ms = at_ms
        if self._same or self._calls or self._outputs or self._model_calls:  # (usually all empty)
            self._same.clear()
            self._calls.clear()
            self._outputs.clear()
            self._model_calls.clear()
        self._ping_pong_fired = self._stalls_fired = 0

    # -- the timeout --------------------------------------------------------------------
    def next_timeout_ms(self) -> int | None:
        """When the task will have run ``timeout_factor`` times its prediction (again)."""
        if self.predicted_ms <= 0:
            return None
        return self.started_ms + int(self.predicted_ms * self.config.timeout_factor * (self.timeouts_fired + 1))

    def timed_out(self, now_ms: int) -> Finding:
        self.timeouts_fired += 1
        ran = now_ms - self.started_ms
        started = Step(self.started_ms, 0, "task_started", text=f"predicted {self.predicted_ms / 1000:g}s")
        last = [started]
        if self.last_activity_ms > self.started_ms:
            last.append(Step(self.last_activity_ms, 0, "progress", text=self.last_progress_note or "last tool call"))
        return Finding(
            DriftKind.TASK_TIMEOUT, "timeout", self.task_id,
            f"running {ran / 1000:.0f}s, {ran / self.predicted_ms:.1f}x its predicted {self.predicted_ms / 1000:g}s",
            tuple(s.evidence() for s in last),
        )  # fmt: skip

    # -- helpers ------------------------------------------------------------------------
    def _ping_pong(self) -> Finding | None:
        """The last 2k calls alternate between two different calls, k = cycles (and more)."""
        calls = self._calls
        need = 2 * self.config.ping_pong_cycles * (self._ping_pong_fired + 1)
        if len(calls) < need:
            return None
        # need is even, so the last call and the one two before it are both B of an A-B-A-B
        # run: when they differ (every call of a run that is not looping) nothing is copied.
        last, before = calls[-1], calls[-3]
        if last.tool_name != before.tool_name or last.args_json != before.args_json:
            return None
        recent = list(calls)[-need:]
        a, b = (recent[0].tool_name, recent[0].args_json), (recent[1].tool_name, recent[1].args_json)
        if a == b:
            return None
        for i, s in enumerate(recent):
            if (s.tool_name, s.args_json) != (a if i % 2 == 0 else b):
                return None
        self._ping_pong_fired += 1
        return Finding(
            DriftKind.LOOPING_TOOL_CALL, "ping_pong", self.task_id,
            f"looks stuck: {a[0]} and {b[0]} called by turns {need // 2} times each (A-B-A-B), nothing new in between",
            self._evidence(recent),
        )  # fmt: skip

    def _evidence(self, steps: Sequence[Step]) -> tuple[DriftEvidence, ...]:
        return tuple(s.evidence() for s in islice(steps, max(0, len(steps) - self.config.max_evidence), None))
