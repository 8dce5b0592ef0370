"""LocalRunSource: a Runner in this process, as a RunSource for the TUI.

The run executes in the app's event loop (started by ``start``); the app reads the run's
InMemorySink through ``events()`` and sends each control with ``ControlChannel.request``,
which returns that control's ack. An agent that raises fails its task (the executor's
isolation boundary keeps only "agent raised X: msg"); the source keeps the traceback of each
such crash in ``tracebacks`` so the TUI can show it and print it on quit.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import traceback
from typing import Any, AsyncIterator, Callable, TextIO

from goldfive.aio import cancel_and_wait
from goldfive.control import ControlAck, ControlChannel, ControlMessage
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.runner import Runner
from goldfive.sinks.memory import InMemorySink, Missed

log = logging.getLogger("goldfive_tui.local_source")


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 60 else f"{seconds:g} s"

#: Builds the run: given the sinks and the channel, return the Runner and its input.
RunnerFactory = Callable[[list[object], ControlChannel], tuple[Runner, str]]


class LocalRunSource:
    #: The run lives in this process: quitting the TUI ends it unless it is kept running.
    owns_run = True

    def __init__(self, factory: RunnerFactory, *, title: str = "", extra_sinks: list[object] | None = None) -> None:
        self.title = title
        self.sink = InMemorySink()
        self.channel = ControlChannel()
        self.runner, self.user_input = factory([self.sink, *(extra_sinks or [])], self.channel)
        self.recorder = next((s for s in extra_sinks or () if hasattr(s, "path")), None)
        if not self.title:
            self.title = self.user_input
        self._run_task: asyncio.Task[object] | None = None
        self.outcome: object | None = None
        self.error: BaseException | None = None
        #: task id -> the formatted traceback of the agent's exception on that task.
        self.tracebacks: dict[str, str] = {}
        #: The sequence of the last event handed to the app (a headless follow resumes after it).
        self.last_sequence = -1
        self._keep_tracebacks()

    def _keep_tracebacks(self) -> None:
        """Wrap the adapter's invoke: record a crash's traceback, then let it propagate to
        the executor unchanged (it still fails the task there)."""
        adapter = getattr(self.runner, "adapter", None)
        invoke = getattr(adapter, "invoke", None)
        if invoke is None:
            return

        @functools.wraps(invoke)
        async def recording_invoke(task: Any, session: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return await invoke(task, session, *args, **kwargs)
            except Exception:
                self.tracebacks[str(getattr(task, "id", "?"))] = traceback.format_exc()
                raise

        adapter.invoke = recording_invoke  # type: ignore[union-attr]

    # -- where it is recorded, how it ended -------------------------------------------------
    @property
    def run_id(self) -> str:
        session = self.runner.session
        return session.run_id if session is not None else ""

    def recorded_at(self) -> str:
        """The recording's path, or "" when the run is not recorded."""
        path = getattr(self.recorder, "path", None)
        return str(path) if path is not None and str(path) != ":memory:" else ""

    @property
    def succeeded(self) -> bool:
        return bool(getattr(self.outcome, "success", False)) and self.error is None

    async def wait_finished(self) -> None:
        """Return once the run has ended (at once if it never started)."""
        if self._run_task is not None:
            await asyncio.shield(self._run_task)

    # -- RunSource ------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._run_task is not None:
            return
        self._run_task = asyncio.get_running_loop().create_task(self._run(), name="goldfive-run")

    async def _run(self) -> object:
        try:
            self.outcome = await self.runner.run(self.user_input)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the sinks already got RunAborted; keep the app alive
            log.exception("run failed")
            self.error = exc
            self.tracebacks.setdefault("(run)", traceback.format_exc())
        return self.outcome

    async def events(self) -> AsyncIterator[Event | Missed]:
        sub = self.sink.subscribe()
        try:
            async for item in sub:
                if isinstance(item, Event):
                    self.last_sequence = item.sequence
                yield item
        finally:
            sub.close()

    async def send(self, msg: ControlMessage) -> ControlAck:
        return await self.channel.request(msg)

    async def follow(self, out: TextIO, *, reject_after: float | None = None) -> None:
        """Print the events the app did not see, one line each, until the run ends.
        ``reject_after``: every approval still undecided that many seconds after now (or
        after it was asked, if later) is rejected, by this person (who chose so on quit);
        None: it waits for ever, as nobody can answer it."""
        from goldfive.event_format import EventLines

        lines = EventLines()  # one line per control, as the app's log showed it

        timers: dict[str, asyncio.Task[None]] = {}

        def watch(ev: Event) -> None:
            kind = ev.WhichOneof("payload")
            if kind == "approval_requested" and reject_after is not None:
                target = ev.approval_requested.target_id
                if target not in timers:
                    timers[target] = asyncio.get_running_loop().create_task(self._reject_later(target, reject_after))
            elif kind in ("approval_granted", "approval_rejected"):
                target = getattr(ev, kind).target_id
                timer = timers.pop(target, None)
                if timer is not None:
                    timer.cancel()

        try:
            for ev in self.sink.events:  # the approvals asked for while the TUI was open
                if ev.sequence <= self.last_sequence:
                    watch(ev)
            async with self.sink.subscribe(after_sequence=self.last_sequence) as sub:
                async for item in sub:
                    if isinstance(item, Missed):
                        print(f"   … missed {item.count} events", file=out, flush=True)
                        continue
                    for line in lines.lines(item):
                        print(line, file=out, flush=True)
                    watch(item)
                    if item.WhichOneof("payload") == "approval_requested":
                        fate = f"it is rejected in {_duration(reject_after)}" if reject_after is not None else "it waits until Ctrl+C"
                        print(f"   (nobody can answer it here: {fate})", file=out, flush=True)
            await self.wait_finished()
        finally:
            for line in lines.flush():  # a control the run never acked
                print(line, file=out, flush=True)
            await cancel_and_wait(list(timers.values()))

    async def _reject_later(self, target_id: str, seconds: float) -> None:
        from goldfive.control import ControlKind
        from goldfive.settings import os_user

        await asyncio.sleep(seconds)
        detail = f"undecided {_duration(seconds)} after the TUI closed (quit: keep running, reject approvals)"
        payload = {"target_id": target_id, "detail": detail, "author": os_user(), "client": "tui"}
        if not self.channel.closed:
            self.channel.send_nowait(ControlMessage(ControlKind.REJECT, payload=payload))

    async def stop(self) -> None:
        if self._run_task is not None:
            await cancel_and_wait([self._run_task])  # _run recorded a failure in self.error
        await self.runner.close()
        self.channel.close()
        await self.channel.refuse_pending("run not active: the TUI closed")
