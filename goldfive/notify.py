"""Notifications: only when a person is needed, never on mere completion.

A *notice* is one of: a new approval request, an escalation from the drift ladder (the run
is paused by GOLDFIVE_PAUSE_ESCALATE), a run that failed. Each names the run and what it
waits for. Two ways to find them, so every front-end says the same thing:

- :class:`NoticeTracker` reads a run's events as they happen (``serve`` hooks every hosted
  run with it; in-process runs can too);
- :func:`diff_notices` compares two polls of what is waiting (a front-end that polls a hub).

:func:`osc9` and :func:`osc777` are the terminal escape strings that terminals turn into
desktop notifications. :class:`NotifyCommand` runs ``--notify-cmd CMD`` with the notice as
JSON on stdin, in the background: it never blocks the caller, and a failing command is
logged once, never raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
from collections.abc import Iterable
from dataclasses import asdict, dataclass

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
NOTICE_KINDS = ("approval", "escalation", "failed")
#: A notice's text in a terminal escape is cut to this many characters.
_OSC_LIMIT = 200
#: Commands that have not finished yet are not started again past this many (a stuck hook
#: must not pile up processes); the notice is logged instead.
MAX_RUNNING_COMMANDS = 8


@dataclass(frozen=True)
class Notice:
    run_id: str
    #: "approval", "escalation" or "failed".
    kind: str
    #: What the run waits for, in words: "approval: publish_deck", "failed: ...".
    reason: str
    #: Event-clock milliseconds when it began to wait.
    at_ms: int = 0
    #: For an approval: the target id (what to pass to ``ctl approve``), its task and tool.
    target_id: str = ""
    task_id: str = ""
    tool_name: str = ""
    prompt: str = ""
    #: The run's goal, when known (which run, for a person with several).
    goal: str = ""

    @property
    def title(self) -> str:
        return f"goldfive: run {self.run_id[:8]} needs you"

    @property
    def body(self) -> str:
        text = self.reason
        if self.prompt:
            text += f": {self.prompt}"
        if self.goal:
            text += f" ({self.goal})"
        return text

    def to_json(self) -> str:
        data = asdict(self)
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
        if kind == "approval_requested":
            p = event.approval_requested
            what = p.tool_name or p.target_id
            return [
                Notice(event.run_id, "approval", f"approval: {what}", event.emitted_at.ToMilliseconds(),
                       p.target_id, p.task_id, p.tool_name, p.prompt, goal)
            ]  # fmt: skip
        after = attention(state)
        if after is None or after.kind not in ("escalation", "failed"):
            return []
        if before is not None and before.kind == after.kind:
            return []  # the same wait, already announced
        return [Notice(event.run_id, after.kind, after.reason, after.since_ms, goal=goal)]

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


class NotifyCommand:
    """Runs a shell command for each notice, the notice's JSON on its stdin.

    ``send`` returns at once: the command runs in a task on the running loop. Its failures
    (cannot start, non-zero exit) are logged once per kind of failure, never raised: a broken
    hook must not stop the run or the UI. ``wait()`` waits for the commands started so far
    (tests, shutdown)."""

    def __init__(self, command: str, *, timeout: float = 10.0) -> None:
        if not command.strip():
            raise ValueError("--notify-cmd needs a command")
        self.command = command
        self.timeout = timeout
        self._tasks: set[asyncio.Task[None]] = set()
        self._logged: set[str] = set()
        self.sent = 0
        self.failures = 0

    def __call__(self, notice: Notice) -> None:
        self.send(notice)

    def send(self, notice: Notice) -> None:
        if len(self._tasks) >= MAX_RUNNING_COMMANDS:
            self._log_once("busy", f"notify command still busy with {len(self._tasks)} notices; dropped: {notice.body}")
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._log_once("loop", "notify command needs a running event loop; notice dropped")
            return
        task = loop.create_task(self._run(notice.to_json()), name="goldfive-notify")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self.sent += 1

    async def _run(self, payload: str) -> None:
        # A thread, not asyncio's subprocess transports: a command still running when its
        # loop closes must not leave a transport behind (each run is bounded by the timeout).
        failure = await asyncio.to_thread(self._run_blocking, payload)
        if failure is not None:
            self.failures += 1
            self._log_once(*failure)

    def _run_blocking(self, payload: str) -> tuple[str, str] | None:
        try:
            done = subprocess.run(
                self.command, shell=True, input=payload.encode() + b"\n",
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=self.timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return "timeout", f"notify command {self.command!r} took over {self.timeout:g}s and was killed"
        except OSError as exc:
            return "start", f"notify command {self.command!r} could not start: {exc}"
        if done.returncode:
            why = done.stderr.decode(errors="replace").strip().splitlines()
            return "exit", f"notify command {self.command!r} exited {done.returncode}" + (f": {why[-1]}" if why else "")
        return None

    def _log_once(self, key: str, message: str) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning("%s (further such errors are not logged)", message)

    async def wait(self) -> None:
        """Wait for every command started so far."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self, timeout: float = 5.0) -> None:
        """Give the running commands ``timeout`` seconds to finish, then kill them."""
        tasks = list(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
