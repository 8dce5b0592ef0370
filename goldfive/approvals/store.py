"""Machine-scope rules: saved as JSON under the user data directory, so every run on this
machine sees them. A damaged file is refused with one line and never overwritten.

Several processes edit the file (a hub and local runs sharing a data directory): every change
is a read-modify-write under an exclusive ``flock`` on a lock file beside it
(:func:`update_rules`), and the file is replaced atomically, so a reader sees the old rules or
the new, and an edit always starts from the one before it. Without the lock, a process that
read before another's removal wrote the removed rule back.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from goldfive.approvals.rules import Rule, RuleBook
from goldfive.errors import GoldfiveError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")


class RulesFileError(GoldfiveError):
    """The saved rules file cannot be read as rules."""


def default_rules_path() -> Path:
    """Beside the recordings: GOLDFIVE_DATA_DIR, else the user's data directory."""
    from goldfive.settings import data_dir

    return Path(data_dir()) / "approval_rules.json"


def load_rules(path: Path | None = None) -> RuleBook:
    """The machine's rule book (empty when nothing was saved yet)."""
    path = path or default_rules_path()
    book = RuleBook("machine")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return book
    except OSError as exc:
        raise RulesFileError(f"cannot read the rules file {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        for raw in data.get("rules", []):
            book.add(Rule.from_dict(raw))
        never = data.get("never_auto", [])
        if not isinstance(never, list) or not all(isinstance(t, str) for t in never):
            raise ValueError("never_auto must be a list of tool names")
        book.never_auto.update(never)
    except ValueError as exc:
        raise RulesFileError(f"the rules file {path} is damaged ({exc}); fix or move it, nothing was changed") from None
    return book


def lock_path(path: Path) -> Path:
    """The lock file beside the rules file (never replaced, so every process locks the same one)."""
    return path.with_name(path.name + ".lock")


@contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Hold the rules file's lock: one editing process at a time, on this machine. Where
    there is no flock (not POSIX) edits are not serialised, as the JSONL sink's lock is not."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover - POSIX only
        yield
        return
    try:
        fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise RulesFileError(f"cannot lock the rules file {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by close, also if this process dies
        yield
    finally:
        os.close(fd)


def update_rules(change: Callable[[RuleBook], T], path: Path | None = None) -> T:
    """Change the saved rules: ``change`` gets the rules as they are now and edits them in
    place; they are written back unless it returns None (nothing changed). Read, change and
    write happen under the file's lock, so no other process's edit is lost or undone."""
    path = path or default_rules_path()
    with _exclusive(path):
        book = load_rules(path)
        result = change(book)
        if result is not None:
            _write(book, path)
    return result


def save_rules(book: RuleBook, path: Path | None = None) -> None:
    """Write ``book`` atomically (a crash leaves the old file or the new, never half of one),
    replacing whatever is saved; an edit of the saved rules is :func:`update_rules`."""
    path = path or default_rules_path()
    with _exclusive(path):
        _write(book, path)


def _write(book: RuleBook, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"rules": [r.to_dict() for r in book.rules()], "never_auto": sorted(book.never_auto)}
    fd, tmp = tempfile.mkstemp(prefix=".rules-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
