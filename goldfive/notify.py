"""Notifications: only when a person is needed, never on mere completion.

A *notice* is one of: a new approval request (kind "question" for a question asked as an
approval), an escalation from the drift ladder (the run is paused by GOLDFIVE_PAUSE_ESCALATE), a
run its budget paused, a run that failed; and, for an approval still undecided, its reminders and its escalation to a
second person (the run's ApprovalReminded / ApprovalEscalated: the same notice again, with
``reminder`` or ``escalated`` set). Each names the run and what it
waits for. Two ways to find them, so every front-end says the same thing:

- :class:`NoticeTracker` reads a run's events as they happen (``serve`` hooks every hosted
  run with it; in-process runs can too);
- :func:`diff_notices` compares two polls of what is waiting (a front-end that polls a hub).

:func:`osc9` and :func:`osc777` are the terminal escape strings that terminals turn into
desktop notifications. :class:`NotifyCommand` runs ``--notify-cmd CMD`` with the notice as
JSON on stdin, in the background: it never blocks the caller, and a failing command is
logged once, never raised. Notices that come faster than the command runs wait in a queue
per run, coalesced (one notice carrying how many it stands for), and the runs take turns;
only past :data:`MAX_WAITING_RUNS` runs waiting is a notice dropped, and every drop is counted
(``NotifyCommand.dropped``, ``warning()``, a log line per interval).
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace

from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.view.attention import attention
from goldfive.view.state import RunState

__all__ = [
    "NOTICE_KINDS",
    "Notice",
    "NoticeTracker",
    "NotifyCommand",
    "diff_notices",
    "notice_key",
    "osc777",
    "osc9",
]

log = logging.getLogger("goldfive.notify")

#: What a notice can be about.
NOTICE_KINDS = ("approval", "question", "escalation", "budget", "failed")
#: A notice's text in a terminal escape is cut to this many characters.
_OSC_LIMIT = 200
#: At most this many commands run at once (a stuck hook must not pile up processes); the
#: notices that come meanwhile wait in the queue.
MAX_RUNNING_COMMANDS = 8
#: Runs with notices waiting for a command, at most; a notice of one more run is dropped
#: (and counted). A run already waiting takes any number: they are coalesced.
MAX_WAITING_RUNS = 1000
#: Dropped notices are logged at most once per this many seconds.
DROP_LOG_INTERVAL_S = 60.0


@dataclass(frozen=True)
class Notice:
    run_id: str
    #: "approval", "question", "escalation", "budget" (its budget paused the run) or "failed".
    kind: str
    #: What the run waits for, in words: "approval: publish_deck", "failed: ...".
    reason: str
    #: Event-clock milliseconds when it began to wait.
    at_ms: int = 0
    #: For an approval: the target id (what to pass to ``ctl approve``), its task and tool;
    #: for a budget pause, "budget-SEQUENCE" (its budget_reached event: what its link names).
    target_id: str = ""
    task_id: str = ""
    tool_name: str = ""
    prompt: str = ""
    #: The run's goal, when known (which run, for a person with several).
    goal: str = ""
    #: How many notices of the run this one stands for: those that came while the command
    #: was busy are coalesced into the newest, which carries their number (and by kind).
    count: int = 1
    counts: tuple[tuple[str, int], ...] = ()
    #: The page that decides it, a one-time link (``serve --http``); "" when there is none.
    url: str = ""
    #: An approval announced again: the how-manyeth reminder (0: the first announcement).
    reminder: int = 0
    #: An approval nobody decided within the escalation interval (sent to ``--escalate-cmd``).
    escalated: bool = False

    @property
    def title(self) -> str:
        if self.escalated:
            return f"goldfive: run {self.run_id[:8]} needs someone (escalated)"
        if self.reminder:
            return f"goldfive: run {self.run_id[:8]} still needs you"
        return f"goldfive: run {self.run_id[:8]} needs you"

    @property
    def body(self) -> str:
        text = self.reason
        if self.prompt:
            text += f": {self.prompt}"
        if self.goal:
            text += f" ({self.goal})"
        if self.count > 1:  # "300 approvals, 1 failed waiting; newest: ..."
            kinds = ", ".join(f"{n} {kind}{'s' if n > 1 and kind != 'failed' else ''}" for kind, n in self.counts)
            text = f"{kinds or self.count} waiting; newest: {text}"
        return text

    def to_json(self) -> str:
        data = asdict(self)
        data["counts"] = dict(self.counts)
        data["title"], data["body"] = self.title, self.body
        return json.dumps(data, sort_keys=True)


def _clean(text: str, limit: int = _OSC_LIMIT) -> str:
    """No control characters (they would end or corrupt the escape), one line, bounded."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def osc9(notice: Notice) -> str:
    """OSC 9 (iTerm2, Windows Terminal, kitty, WezTerm): a desktop notification with one text."""
    return f"\x1b]9;{_clean(notice.title + ': ' + notice.body)}\x07"


def osc777(notice: Notice) -> str:
    """OSC 777 (rxvt-unicode, foot, Ghostty, VTE): ``notify;TITLE;BODY``. ``;`` separates the
    fields, so the title may not hold one."""
    return f"\x1b]777;notify;{_clean(notice.title).replace(';', ',')};{_clean(notice.body)}\x07"


class NoticeTracker:
    """Folds the events of any number of runs and says which event is a notice.

    Feed it live events only: history replayed into it would announce approvals answered
    long ago. ``feed(event)`` returns the notices that event raises (zero or one)."""

    def __init__(self) -> None:
        self._states: dict[str, RunState] = {}

    def state(self, run_id: str) -> RunState | None:
        return self._states.get(run_id)

    def feed(self, event: Event) -> list[Notice]:
        state = self._states.setdefault(event.run_id, RunState())
        before = attention(state)
        state.apply(event)
        kind = event.WhichOneof("payload")
        goal = state.goal_summary
        if kind == "approval_requested" and event.approval_requested.under_review:
            return []  # the run's reviewer looks first: a person hears of it only if it asks
        if kind == "approval_reviewed" and event.approval_reviewed.decision == "ask":
            view = state.approvals.get(event.approval_reviewed.target_id)
            if view is None:
                return []  # decided meanwhile
            why = view.review_reason
            return [
                Notice(event.run_id, "approval", f"approval: {view.tool_name or view.target_id} (the reviewer asks you: {why})",
                       view.requested_ms, view.target_id, view.task_id, view.tool_name, view.prompt, goal)
            ]  # fmt: skip
        if kind == "approval_requested":
            p = event.approval_requested
            what = p.tool_name or p.target_id
            kind_of = "question" if p.kind == "question" else "approval"
            return [
                Notice(event.run_id, kind_of, f"{kind_of}: {what}", event.emitted_at.ToMilliseconds(),
                       p.target_id, p.task_id, p.tool_name, p.prompt, goal)
            ]  # fmt: skip
        if kind in ("approval_reminded", "approval_escalated"):
            target = event.approval_reminded.target_id if kind == "approval_reminded" else event.approval_escalated.target_id
            view = state.approvals.get(target)
            if view is None:
                return []  # decided meanwhile
            if view.with_reviewer and kind == "approval_reminded":
                return []  # the reviewer has it: nobody was asked yet (an escalation, once, still goes out)
            kind_of = "question" if view.kind == "question" else "approval"
            waited = (event.emitted_at.ToMilliseconds() - view.requested_ms) // 1000 if view.requested_ms else 0
            return [
                Notice(event.run_id, kind_of, f"{kind_of}: {view.tool_name or target} (waiting {waited} s)",
                       view.requested_ms, target, view.task_id, view.tool_name, view.prompt, goal,
                       reminder=event.approval_reminded.reminder if kind == "approval_reminded" else 0,
                       escalated=kind == "approval_escalated")
            ]  # fmt: skip
        after = attention(state)
        if after is None or after.kind not in ("escalation", "budget", "failed"):
            return []
        if before is not None and before.kind == after.kind:
            return []  # the same wait, already announced
        # A budget pause is named by its budget_reached (a link to it decides that pause only).
        target = state.budget_pause.target_id if after.kind == "budget" and state.budget_pause is not None else ""
        return [Notice(event.run_id, after.kind, after.reason, after.since_ms, target, goal=goal)]

    def forget(self, run_id: str) -> None:
        self._states.pop(run_id, None)


def notice_key(notice: Notice) -> tuple[str, str, str]:
    """What makes a notice the same one on the next poll: its run, kind and target."""
    return (notice.run_id, notice.kind, notice.target_id)


def diff_notices(old: set[tuple[str, str, str]] | None, current: Iterable[Notice]) -> list[Notice]:
    """The notices in ``current`` (what waits for a person now: approvals, escalations,
    failed runs) that were not there at the previous poll (``old``, their keys). The first
    poll (``old`` is None) only sets the baseline: what already waited is not news."""
    if old is None:
        return []
    return [n for n in current if notice_key(n) not in old]


class _Waiting:
    """The notices of one run not yet given to the command: the newest, and how many."""

    __slots__ = ("counts", "newest")

    def __init__(self, notice: Notice) -> None:
        self.newest = notice
        self.counts: Counter[str] = Counter({notice.kind: 1})

    def add(self, notice: Notice) -> None:
        self.newest = notice
        self.counts[notice.kind] += 1

    def notice(self) -> Notice:
        total = sum(self.counts.values())
        if total == 1:
            return self.newest
        return replace(self.newest, count=total, counts=tuple(sorted(self.counts.items())))


class NotifyCommand:
    """Runs a shell command for each notice, the notice's JSON on its stdin.

    ``send`` returns at once. At most :data:`MAX_RUNNING_COMMANDS` commands run at a time, in
    threads of their own; the notices sent meanwhile wait, per run: a run's waiting notices
    become one (the newest, with ``count``), and the runs take turns, so a run that floods
    cannot hide another run's notice. Past :data:`MAX_WAITING_RUNS` runs waiting, a new run's
    notice is dropped: counted in ``dropped``, said by ``warning()`` and logged at most once per
    :data:`DROP_LOG_INTERVAL_S`. Command failures (cannot start, non-zero exit) are logged
    once per kind of failure, never raised: a broken hook must not stop the run or the UI.
    ``wait()`` waits until every notice sent so far was handed to a command that finished."""

    def __init__(
        self,
        command: str,
        *,
        timeout: float = 10.0,
        max_waiting_runs: int = MAX_WAITING_RUNS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not command.strip():
            raise ValueError("--notify-cmd needs a command")
        self.command = command
        self.timeout = timeout
        self.max_waiting_runs = max_waiting_runs
        self._clock = clock
        self._tasks: set[asyncio.Task[None]] = set()
        self._logged: set[str] = set()
        #: Runs with notices waiting, in the order they take their turn.
        self._waiting: dict[str, _Waiting] = {}
        self._pool: ThreadPoolExecutor | None = None
        #: Notices given to ``send``; commands started; notices dropped, and folded into another.
        self.received = 0
        self.sent = 0
        self.dropped = 0
        self.coalesced = 0
        self.failures = 0
        self._dropped_unlogged = 0
        self._last_drop_log: float | None = None

    def __call__(self, notice: Notice) -> None:
        self.send(notice)

    def send(self, notice: Notice) -> None:
        self.received += 1
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._drop(1, "no running event loop to run the command on")
            return
        waiting = self._waiting.get(notice.run_id)
        if waiting is not None:
            waiting.add(notice)
            self.coalesced += 1
        elif len(self._waiting) >= self.max_waiting_runs:
            self._drop(1, f"{len(self._waiting)} runs already wait for the command")
            return
        else:
            self._waiting[notice.run_id] = _Waiting(notice)
        if len(self._tasks) < MAX_RUNNING_COMMANDS:
            task = loop.create_task(self._work(), name="goldfive-notify")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def warning(self) -> str:
        """What the hub says about notices it could not deliver ("" when none)."""
        if not self.dropped:
            return ""
        return f"{self.dropped} notifications dropped: --notify-cmd could not keep up"

    async def _work(self) -> None:
        """Hand waiting notices to the command, the runs in turn, until none waits."""
        while self._waiting:
            run_id = next(iter(self._waiting))  # the run that has waited longest
            notice = self._waiting.pop(run_id).notice()  # its next notices queue behind the others
            self.sent += 1
            failure = await asyncio.get_running_loop().run_in_executor(self._executor(), self._run_blocking, notice.to_json())
            if failure is not None:
                self.failures += 1
                self._log_once(*failure)

    def _executor(self) -> ThreadPoolExecutor:
        # Threads of its own, not asyncio's subprocess transports (a command still running when
        # its loop closes must not leave a transport behind) nor the loop's default executor
        # (slow hooks must not hold the threads the rest of the process uses).
        if self._pool is None:
            self._pool = ThreadPoolExecutor(MAX_RUNNING_COMMANDS, thread_name_prefix="goldfive-notify")
        return self._pool

    def _run_blocking(self, payload: str) -> tuple[str, str] | None:
        try:
            done = subprocess.run(
                self.command, shell=True, input=payload.encode() + b"\n",
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=self.timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return "timeout", f"notify command {self.command!r} took over {self.timeout:g}s and was killed"
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the command
            return "start", f"notify command {self.command!r} could not start: {exc}"
        if done.returncode:
            why = done.stderr.decode(errors="replace").strip().splitlines()
            return "exit", f"notify command {self.command!r} exited {done.returncode}" + (f": {why[-1]}" if why else "")
        return None

    def _drop(self, n: int, why: str) -> None:
        self.dropped += n
        self._dropped_unlogged += n
        now = self._clock()
        if self._last_drop_log is None or now - self._last_drop_log >= DROP_LOG_INTERVAL_S:
            log.warning("notify: %d notices dropped (%s); %d dropped in all", self._dropped_unlogged, why, self.dropped)
            self._dropped_unlogged = 0
            self._last_drop_log = now

    def _log_once(self, key: str, message: str) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning("%s (further such errors are not logged)", message)

    async def wait(self) -> None:
        """Wait until every notice sent so far went to a command, and those commands ended."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self, timeout: float = 5.0) -> None:
        """Give the queue and the running commands ``timeout`` seconds, then stop: what still
        waits is dropped (and counted, and logged); the commands left are killed by their own
        timeout."""
        tasks = list(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        left = sum(sum(w.counts.values()) for w in self._waiting.values())
        self._waiting.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if left:
            self._last_drop_log = None  # said now, whatever the interval
            self._drop(left, "still waiting when the command was stopped")
        if self._pool is not None:
            self._pool.shutdown(wait=False)
