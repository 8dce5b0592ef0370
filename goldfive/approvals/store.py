"""Machine-scope rules: saved as JSON under the user data directory, so every run on this
machine sees them. A damaged file is refused with one line and never overwritten."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from goldfive.approvals.rules import Rule, RuleBook
from goldfive.errors import GoldfiveError


class RulesFileError(GoldfiveError):
    """The saved rules file cannot be read as rules."""


def default_rules_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("goldfive")) / "approval_rules.json"


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


def save_rules(book: RuleBook, path: Path | None = None) -> None:
    """Write ``book`` atomically (a crash leaves the old file or the new, never half of one)."""
    path = path or default_rules_path()
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
