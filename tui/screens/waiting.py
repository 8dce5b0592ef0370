"""The waiting queue: every pending approval, question and escalation of every run, oldest first.

Enter opens an item (prompt, tool, task, full arguments) and marks it read; from there ``a``
approves (a question: answers it, typed or picked from its options), ``x`` rejects with a
reason, ``e`` edits a tool call's arguments, then approves it, ``o`` opens its run. ``A`` approves in one go only the
items the person has opened and read that were in the list when it was drawn (the screen
opened) and still wait: an item that arrived afterwards is never approved unread.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Label, Static

from ..format import age_text, clip
from ..runs.model import Snapshot, WaitingItem
from ..widgets.cursorlist import CursorList
from ..widgets.footer import FitFooter
from .detail import _DetailScreen, highlighted, pretty_json

__all__ = ["WAITING_KEYS", "WaitingDetail", "WaitingScreen"]

WAITING_KEYS: list[BindingType] = [
    Binding("enter", "open_item", "Read", tooltip="Open the item: prompt, tool, task, arguments (marks it read)", id="waiting.read"),
    Binding("a", "decide(True)", "Approve", tooltip="Approve the selected item (once read); a question: answer it, typed or picked", id="waiting.approve"),
    Binding("x", "decide(False)", "Reject", tooltip="Reject the selected item, with a reason (once read)", id="waiting.reject"),
    Binding("e", "edit_item", "Edit+approve", show=False, tooltip="Edit the selected tool call's arguments, then approve it (once read)", id="waiting.edit"),
    Binding("A", "approve_read", "Approve read", tooltip="Approve every item you opened and read that was listed when the queue opened", id="waiting.batch"),
    Binding("o", "jump", "Open run", tooltip="Open the selected item's run", id="waiting.jump"),
    Binding("escape", "close", "Back", id="waiting.close"),
    Binding("n", "next_needing", "Next needing you", show=False, tooltip="Open the next run that needs you", id="waiting.next"),
    Binding("q", "app.quit", "Quit", tooltip="Quit; runs started in this process are cancelled after a confirmation", id="waiting.quit"),
]  # fmt: skip

_KIND_STYLE = {"approval": "bold yellow", "question": "bold cyan", "escalation": "bold magenta"}


class WaitingList(CursorList):
    pass


class Decider(Protocol):
    """Where the queue's decisions and jumps go: the runs screen."""

    def decide(
        self, items: list[WaitingItem], approve: bool, reason: str = "", answer: dict[str, str] | None = None, arguments: dict[str, Any] | None = None
    ) -> None: ...

    def open_run(self, run_id: str) -> None: ...

    def next_needing(self) -> None: ...


def item_row(item: WaitingItem, now_ms: int, width: int, *, read: bool, new: bool) -> Text:
    # Trailing spaces belong to each column's span: a span never starts with spaces.
    out = Text(no_wrap=True, overflow="crop")
    out.append("✓ " if read else ("+ " if new else "· "), style="green" if read else "cyan")
    out.append((age_text(now_ms - item.since_ms) if item.since_ms else "-").ljust(6) + " ", style="dim")
    out.append(item.run_id[:8].ljust(8) + " ", style="bold")
    out.append(clip(item.task_id or "-", 12).ljust(12) + " ", style="not dim")
    out.append(clip(item.what, 16).ljust(16) + " ", style=_KIND_STYLE.get(item.kind, ""))
    rest = max(6, width - 48)
    options = f"  [{' / '.join(item.options)}]" if item.options else ""
    out.append(clip((item.args_json or item.prompt) + options, rest), style="dim")
    return out


class WaitingScreen(Screen[None]):
    """The runs screen calls ``show`` at every poll; decisions go to ``hub.decide``."""

    BINDINGS: ClassVar[list[BindingType]] = WAITING_KEYS

    def __init__(self, snapshot: Snapshot, now_ms: int, hub: Decider) -> None:
        super().__init__(id="waiting-screen")
        self.hub = hub
        #: The items as the list was drawn when the queue opened: only these can be batch-approved.
        self.drawn: frozenset[str] = frozenset(w.key for w in snapshot.waiting)
        self.read: set[str] = set()
        self.items: list[WaitingItem] = list(snapshot.waiting)
        self._now = now_ms

    def compose(self) -> ComposeResult:
        yield Static(id="waiting-title")
        yield Static(Text.assemble(("  ", "dim"), ("AGE    RUN      TASK         TOOL             ARGUMENTS", "bold")), id="waiting-head")
        yield WaitingList(id="waiting")
        yield FitFooter()

    def on_mount(self) -> None:
        self.query_one(WaitingList).empty_text = "nothing waits for you"
        self.query_one(WaitingList).focus()
        self._paint()

    def show(self, snapshot: Snapshot, now_ms: int) -> None:
        self.items, self._now = list(snapshot.waiting), now_ms
        if self.is_mounted:
            self._paint()

    def _paint(self) -> None:
        if not self.query(WaitingList):
            return  # composing, or torn down while a poll was in flight
        table = self.query_one(WaitingList)
        width = table.scrollable_content_region.width or 80
        rows = [item_row(w, self._now, width, read=w.key in self.read, new=w.key not in self.drawn) for w in self.items]
        table.set_rows([w.key for w in self.items], rows)
        eligible = len(self.eligible())
        title = Text()
        title.append("Waiting for you", style="bold")
        n = len(self.items)
        # The + mark said in words once an item carries it (in the room "oldest first" took,
        # so the line still fits 80 columns).
        new = any(w.key not in self.drawn for w in self.items)
        waiting = f"{n} item{'' if n == 1 else 's'}{'' if new else ', oldest first'}" if n else "nothing waiting"
        title.append(f" · {waiting} · {eligible} read (A approves those)", style="dim")
        if new:
            title.append(" · + arrived after opening", style="dim")
        self.query_one("#waiting-title", Static).update(title)

    def item(self, key: str | None) -> WaitingItem | None:
        return next((w for w in self.items if w.key == key), None)

    @property
    def selected(self) -> WaitingItem | None:
        return self.item(self.query_one(WaitingList).selected_key)

    def eligible(self) -> list[WaitingItem]:
        """What a batch approve acts on: read, listed when the queue opened, still waiting."""
        return [w for w in self.items if w.key in self.read and w.key in self.drawn and w.kind == "approval"]

    # -- keys -----------------------------------------------------------------------------------
    def on_cursor_list_selected(self, event: CursorList.Selected) -> None:
        event.stop()
        self.action_open_item()

    def action_open_item(self) -> None:
        item = self.selected
        if item is None:
            return
        self.read.add(item.key)
        self._paint()

        def answered(what: str | None) -> None:
            if what == "approve":
                self._approve(item)
            elif what == "reject":
                self._reject(item)
            elif what == "edit":
                self._edit(item)
            elif what == "open":
                self.hub.open_run(item.run_id)

        self.app.push_screen(WaitingDetail(item, self._now), answered)

    def _read_first(self, item: WaitingItem) -> bool:
        """Read before you decide: an unread item opens (True) instead of being decided."""
        if item.key in self.read:
            return False
        self.action_open_item()
        return True

    def action_decide(self, approve: bool) -> None:
        item = self.selected
        if item is None or self._read_first(item):
            return
        if approve:
            self._approve(item)
        else:
            self._reject(item)

    def _approve(self, item: WaitingItem) -> None:
        """Approve it; a question is answered instead (typed, or one of its options picked)."""
        if item.kind != "question":
            self.hub.decide([item], True)
            return
        from .approvals import AnswerScreen

        def answered(payload: dict[str, str] | None) -> None:
            if payload is not None:
                self.hub.decide([item], True, answer=payload)

        self.app.push_screen(AnswerScreen(item.prompt, item.options, item.free_text, title=f"Answer ({item.run_id[:8]})"), answered)

    def action_edit_item(self) -> None:
        item = self.selected
        if item is None:
            return
        if not editable(item):
            self.notify(f"{no_edit(item)}: a approves it as it is.", severity="warning")
            return
        if not self._read_first(item):
            self._edit(item)

    def _edit(self, item: WaitingItem) -> None:
        """The call's arguments in the editor (as on a run's screen); ctrl+s approves them."""
        from goldfive.view import ApprovalView

        from .approvals import EditArgumentsScreen

        if not editable(item):
            self.notify(f"{no_edit(item)}: a approves it as it is.", severity="warning")
            return
        try:
            args = json.loads(item.args_json) if item.args_json else {}
        except ValueError:
            args = None
        if not isinstance(args, dict):
            self.notify("Its arguments are not a JSON object: they cannot be edited here.", severity="warning")
            return
        view = ApprovalView(item.target_id, "tool", item.prompt, item.task_id, item.tool_name, args, item.args_json, item.since_ms, 0,
                            parameters_json=item.parameters_json)  # fmt: skip

        def edited(arguments: dict[str, Any] | None) -> None:
            if arguments is not None:
                self.hub.decide([item], True, arguments=arguments)

        self.app.push_screen(EditArgumentsScreen(view), edited)

    def _reject(self, item: WaitingItem) -> None:
        from .dialogs import TextPrompt

        def entered(reason: str | None) -> None:
            if reason is not None:
                self.hub.decide([item], False, reason.strip())

        verb = "Reject" if item.kind in ("approval", "question") else "Cancel the run of"
        self.app.push_screen(TextPrompt(f"{verb} {item.what} ({item.run_id[:8]}): reason", hint="Enter sends · Esc cancels"), entered)

    def action_approve_read(self) -> None:
        items = self.eligible()
        if not items:
            self.notify("Open (Enter) and read the items first: A approves only those.", severity="warning")
            return
        from .dialogs import ConfirmScreen

        n = len(items)
        names = ", ".join(f"{w.what} ({w.run_id[:8]})" for w in items[:3]) + (f" and {n - 3} more" if n > 3 else "")
        question = f"Approve the {n} item{'' if n == 1 else 's'} you read? {names}"

        def confirmed(yes: bool | None) -> None:
            if yes:
                still = {w.key for w in self.eligible()}  # one decided elsewhere meanwhile is left alone
                self.hub.decide([w for w in items if w.key in still], True)

        self.app.push_screen(ConfirmScreen(question, yes=f"Approve {n}"), confirmed)

    def action_jump(self) -> None:
        if item := self.selected:
            self.hub.open_run(item.run_id)

    def action_next_needing(self) -> None:
        self.hub.next_needing()

    def action_close(self) -> None:
        self.app.pop_screen()


def editable(item: WaitingItem) -> bool:
    """A tool call's approval: its arguments can be edited before approving."""
    return item.kind == "approval" and bool(item.tool_name)


def no_edit(item: WaitingItem) -> str:
    return {"question": "A question has no arguments to edit", "escalation": "An escalation has no arguments to edit"}.get(
        item.kind, "A task approval has no arguments to edit"
    )


class WaitingDetail(_DetailScreen):
    """One waiting item whole: a approve (an escalation: resume), x reject (cancel), o open its run."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer('approve')", "Approve", id="wdetail.approve"),
        Binding("x", "answer('reject')", "Reject", id="wdetail.reject"),
        Binding("e", "answer('edit')", "Edit+approve", id="wdetail.edit"),
        Binding("o", "answer('open')", "Open run", id="wdetail.open"),
    ]
    copy_what = "arguments"

    def __init__(self, item: WaitingItem, now_ms: int) -> None:
        super().__init__()
        self.item = item
        self.copy_text = pretty_json(item.args_json) if item.args_json else item.prompt
        self._now = now_ms

    def compose(self) -> ComposeResult:
        w = self.item
        with Vertical(classes="dialog detail"):
            title = f"Question · run {w.run_id}" if w.kind == "question" else f"{w.kind.capitalize()}: {w.what} · run {w.run_id}"
            yield Label(title, classes="dialog-title")
            yield Static(Text(w.prompt or "(no prompt)"), id="waiting-prompt")
            meta = Text(style="dim")
            if w.goal:
                meta.append(f"goal: {w.goal}\n")
            if w.task_id:
                meta.append(f"task: {w.task_id}\n")
            if w.tool_name:
                meta.append(f"tool: {w.tool_name}    call: {w.target_id}\n")
            if w.options:
                meta.append(f"options: {' / '.join(w.options)}" + ("" if w.free_text else " (pick one)") + "\n")
            meta.append(f"waiting {age_text(self._now - w.since_ms)}" if w.since_ms else "waiting")
            yield Static(meta, classes="detail-meta")
            with VerticalScroll(id="waiting-args", classes="detail-body", can_focus=True):
                yield Static(highlighted(self.copy_text or "(no arguments)"))
            what = {"approval": "a approve · x reject", "question": "a answer · x reject"}.get(w.kind, "a resume the run · x cancel it")
            if editable(w):
                what += " · e edit, then approve"
            yield Label(f"{what} · o open the run · y copy · Esc back", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#waiting-args").focus()

    def action_answer(self, what: str) -> None:
        if what == "edit" and not editable(self.item):
            self.notify(f"{no_edit(self.item)}: a approves it as it is.", severity="warning")
            return
        self.dismiss(what)
