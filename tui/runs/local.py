"""InProcessRuns: several Runners in this process, as a RunsSource (``goldfive demo --runs N``).

Each run gets an InMemorySink (the opened run's screen reads it), a ControlChannel and a
sink that folds its events into a RunState, from which its row and waiting items are read:
no task per run, no copy of the history.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from goldfive.aio import cancel_and_wait
from goldfive.control import ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink, Missed
from goldfive.store.registry import ACKNOWLEDGED, ARCHIVED
from goldfive.view.attention import mark_refusal
from goldfive.view.state import RunState

from .model import MarkRefused, Snapshot, WaitingItem, row_from_state, waiting_from_state

__all__ = ["InProcessRuns", "LocalRunFactory"]

log = logging.getLogger("goldfive_tui.runs")

#: Builds one run: given its sinks, channel and id, the Runner and its input.
LocalRunFactory = Callable[[list[object], ControlChannel, str], tuple[Runner, str]]


class _FoldSink:
    def __init__(self, state: RunState) -> None:
        self.state = state

    async def emit(self, event: Event) -> None:
        self.state.apply(event)

    async def close(self) -> None:
        return None


@dataclass
class _LocalRun:
    run_id: str
    runner: Runner
    user_input: str
    sink: InMemorySink
    channel: ControlChannel
    state: RunState
    task: asyncio.Task[Any] | None = None
    error: BaseException | None = field(default=None)


class OpenedLocalRun:
    """One in-process run as the usual screen's RunSource. Closing the screen leaves the
    run going (the hub owns it), so ``owns_run`` is False."""

    owns_run = False

    def __init__(self, run: _LocalRun) -> None:
        self._run = run
        self.run_id = run.run_id
        self.title = run.user_input

    async def start(self) -> None:
        return None

    async def events(self) -> AsyncIterator[Event | Missed]:
        sub = self._run.sink.subscribe()
        try:
            async for item in sub:
                yield item
        finally:
            sub.close()

    async def send(self, msg: ControlMessage) -> ControlAck:
        return await self._run.channel.request(msg)

    async def stop(self) -> None:
        return None


class InProcessRuns:
    owns_runs = True

    def __init__(self, factories: list[tuple[str, LocalRunFactory]], *, extra_sinks: Callable[[str], list[object]] | None = None) -> None:
        """``factories``: (run id, factory) pairs; ``extra_sinks(run_id)`` adds sinks (a recorder)."""
        self.title = f"{len(factories)} runs in this process"
        self._runs: dict[str, _LocalRun] = {}
        #: run id -> a person's marks on it (acknowledged, archived); they end with the process.
        self._marks: dict[str, set[str]] = {}
        for run_id, factory in factories:
            sink, channel, state = InMemorySink(), ControlChannel(), RunState()
            sinks: list[object] = [sink, _FoldSink(state), *(extra_sinks(run_id) if extra_sinks else [])]
            runner, user_input = factory(sinks, channel, run_id)
            self._runs[run_id] = _LocalRun(run_id, runner, user_input, sink, channel, state)

    @property
    def run_ids(self) -> list[str]:
        return list(self._runs)

    def state(self, run_id: str) -> RunState:
        return self._runs[run_id].state

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for run in self._runs.values():
            if run.task is None:
                run.task = loop.create_task(self._run(run), name=f"goldfive-run-{run.run_id}")

    async def _run(self, run: _LocalRun) -> None:
        try:
            await run.runner.run(run.user_input)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the sinks already got RunAborted; the row shows it failed
            log.exception("run %s failed", run.run_id)
            run.error = exc

    async def wait_finished(self) -> None:
        tasks = [r.task for r in self._runs.values() if r.task is not None]
        if tasks:
            await asyncio.gather(*[asyncio.shield(t) for t in tasks], return_exceptions=True)

    @property
    def live(self) -> int:
        return sum(1 for r in self._runs.values() if not r.state.finished and r.task is not None and not r.task.done())

    async def stop(self) -> None:
        await cancel_and_wait([r.task for r in self._runs.values() if r.task is not None])
        for run in self._runs.values():
            await run.runner.close()
            run.channel.close()
            await run.channel.refuse_pending("run not active: the TUI closed")

    async def poll(self) -> Snapshot:
        marks = self._marks
        rows = [
            row_from_state(r.state, r.run_id, "local", acknowledged=ACKNOWLEDGED in marks.get(r.run_id, ()))
            for r in self._runs.values()
            if ARCHIVED not in marks.get(r.run_id, ())
        ]
        waiting = [w for r in self._runs.values() for w in waiting_from_state(r.state, r.run_id)]
        waiting.sort(key=lambda w: (w.since_ms, w.key))
        return Snapshot(rows, waiting)

    async def mark(self, run_id: str, mark: str, *, undo: bool = False) -> None:
        if problem := mark_refusal(self._runs[run_id].state, mark, undo=undo):
            raise MarkRefused(problem)
        marks = self._marks.setdefault(run_id, set())
        if undo:
            marks.discard(mark)
        else:
            marks.add(mark)

    def open(self, run_id: str) -> OpenedLocalRun:
        return OpenedLocalRun(self._runs[run_id])

    async def decide(
        self, item: WaitingItem, approve: bool, reason: str = "", answer: dict[str, str] | None = None, arguments: dict[str, Any] | None = None
    ) -> ControlAck:
        return await self._runs[item.run_id].channel.request(decision(item, approve, reason, answer, arguments))


def decision(
    item: WaitingItem, approve: bool, reason: str = "", answer: dict[str, str] | None = None, arguments: dict[str, Any] | None = None
) -> ControlMessage:
    """The control that answers a waiting item: APPROVE / REJECT an approval (APPROVE with
    ``arguments``: the call's edited arguments); ANSWER a
    question (with ``answer``: its text or option; without, REJECT says no); for an
    escalation, RESUME the run or CANCEL it. Signed by this person through the TUI."""
    from goldfive.settings import client_name, os_user

    by: dict[str, object] = {"author": os_user(), "client": client_name("tui")}
    if item.kind == "question" and answer is not None:
        return ControlMessage(kind=ControlKind.ANSWER, payload={"target_id": item.target_id, **answer, **by})
    if item.kind in ("approval", "question"):
        kind = ControlKind.APPROVE if approve else ControlKind.REJECT
        edited: dict[str, object] = {"arguments": arguments} if approve and arguments is not None else {}
        return ControlMessage(kind=kind, payload={"target_id": item.target_id, "detail": reason, **edited, **by})
    if approve:
        return ControlMessage(kind=ControlKind.RESUME, payload=by)
    return ControlMessage(kind=ControlKind.CANCEL, payload={"reason": reason or "cancelled from the waiting queue", **by})
