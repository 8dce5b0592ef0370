"""Where a hub's notices go: ``--notify-cmd`` and ``--escalate-cmd``, each given any number of
times, each with a filter, each notice carrying a one-time link to decide its item.

A route is written ``[FILTER ::] COMMAND``. FILTER is space-separated ``key=value[,value...]``:

* ``kind=approval,question``: the notice kinds (goldfive.notify.NOTICE_KINDS); default all;
* ``run=ID``: runs whose id starts with one of these; default all;
* ``tool=deploy,db_*``: approvals of these tools (globs); default all (and notices of no tool);
* ``to=alice``: whom the links in its notices are issued to, recorded as the author of a
  decision made through them (and checked against ``--approvers``); default ``link``.

``goldfive serve --notify-cmd 'kind=approval,question to=alice :: goldfive notify ntfy https://ntfy.sh/T'``.

An approval that is reminded goes to the notify routes again; one that is escalated goes to
the escalate routes (to the notify routes when there are none).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from goldfive.errors import ServeConfigError
from goldfive.notify import NOTICE_KINDS, Notice, NoticeTracker, NotifyCommand
from goldfive.pb.goldfive.v1.events_pb2 import Event

__all__ = ["DEFAULT_RECIPIENT", "NoticeDispatch", "NoticeFilter", "NoticeRoute"]

log = logging.getLogger("goldfive.notify")

#: Whom a route's links are issued to when it names nobody.
DEFAULT_RECIPIENT = "link"
_SEPARATOR = " :: "
_KEYS = ("kind", "run", "tool", "to")


@dataclass(frozen=True)
class NoticeFilter:
    kinds: frozenset[str] = frozenset()
    runs: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()

    def matches(self, notice: Notice) -> bool:
        if self.kinds and notice.kind not in self.kinds:
            return False
        if self.runs and not any(notice.run_id.startswith(r) for r in self.runs):
            return False
        if self.tools and not any(fnmatch.fnmatchcase(notice.tool_name, t) for t in self.tools):
            return False
        return True


@dataclass(frozen=True)
class NoticeRoute:
    """One ``--notify-cmd`` / ``--escalate-cmd``: its command, its filter, its recipient."""

    command: str
    filter: NoticeFilter = NoticeFilter()
    to: str = DEFAULT_RECIPIENT

    @classmethod
    def parse(cls, text: str, *, flag: str = "--notify-cmd") -> NoticeRoute:
        """``[FILTER ::] COMMAND``; ServeConfigError saying what is wrong."""
        head, sep, command = text.partition(_SEPARATOR)
        words = head.split()
        first = words[0].partition("=") if words else ("", "", "")
        if not (sep and first[1] and first[0] in _KEYS):
            command, words = text, []  # no filter: the whole text is the command
        if not command.strip():
            raise ServeConfigError(f"{flag} needs a command")
        values: dict[str, list[str]] = {}
        for word in words:
            key, eq, value = word.partition("=")
            items = [v for v in value.split(",") if v]
            if not eq or key not in _KEYS or not items:
                raise ServeConfigError(f"{flag} {text!r}: {word!r} is not one of {', '.join(k + '=...' for k in _KEYS)}")
            if key in values:
                raise ServeConfigError(f"{flag} {text!r}: {key}= is given twice")
            values[key] = items
        unknown = [k for k in values.get("kind", []) if k not in NOTICE_KINDS]
        if unknown:
            raise ServeConfigError(f"{flag} {text!r}: kind {unknown[0]!r} is not one of {', '.join(NOTICE_KINDS)}")
        to = values.get("to", [DEFAULT_RECIPIENT])
        if len(to) != 1:
            raise ServeConfigError(f"{flag} {text!r}: to= names one person")
        flt = NoticeFilter(frozenset(values.get("kind", [])), tuple(values.get("run", [])), tuple(values.get("tool", [])))
        return cls(command.strip(), flt, to[0])


#: Makes the link of a notice for a route's recipient: ``(notice, to) -> url`` ("" for none).
LinkMaker = Callable[[Notice, str], str]


class NoticeDispatch:
    """Reads a hub's live events (``hook``), finds the notices (goldfive.notify.NoticeTracker),
    and gives each to every route whose filter matches, with a link of its own (``links``)."""

    def __init__(self, notify: Iterable[NoticeRoute], escalate: Iterable[NoticeRoute] = (), links: LinkMaker | None = None) -> None:
        self.tracker = NoticeTracker()
        self.notify = [(route, NotifyCommand(route.command)) for route in notify]
        self.escalate = [(route, NotifyCommand(route.command)) for route in escalate]
        self.links = links

    @property
    def recipients(self) -> set[str]:
        return {route.to for route, _ in self.notify + self.escalate}

    def hook(self, event: Event) -> None:
        """A host event hook (RunHost.event_hooks): never raises into the run."""
        for notice in self.tracker.feed(event):
            self.send(notice)

    def send(self, notice: Notice) -> None:
        routes = self.escalate if notice.escalated and self.escalate else self.notify
        for route, command in routes:
            if not route.filter.matches(notice):
                continue
            url = ""
            if self.links is not None and notice.target_id:
                try:
                    url = self.links(notice, route.to)
                except Exception:  # isolation boundary: a notice without its link still tells the person
                    log.exception("notify: could not make the link of %s in run %s", notice.target_id, notice.run_id)
            command.send(replace(notice, url=url) if url else notice)

    def commands(self) -> list[NotifyCommand]:
        return [command for _, command in self.notify + self.escalate]

    def warning(self) -> str:
        return "; ".join(w for w in (c.warning() for c in self.commands()) if w)

    async def wait(self) -> None:
        for command in self.commands():
            await command.wait()

    async def aclose(self) -> None:
        for command in self.commands():
            await command.aclose()

    def state(self, run_id: str) -> Any:
        return self.tracker.state(run_id)
