"""What the TUI remembers between sessions: the theme a person picked (ctrl+p → theme).

Kept in ``tui.json`` under GOLDFIVE_CONFIG_DIR, else the user's config directory. A file that
cannot be read or written is ignored with a log line: preferences never stop the app.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger("goldfive.tui")


def prefs_path() -> Path:
    override = os.environ.get("GOLDFIVE_CONFIG_DIR")
    if override:
        return Path(override) / "tui.json"
    import platformdirs

    return Path(platformdirs.user_config_dir("goldfive", appauthor=False)) / "tui.json"


def load_prefs() -> dict[str, Any]:
    path = prefs_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring TUI preferences in %s: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def save_pref(key: str, value: Any) -> None:
    path = prefs_path()
    prefs = load_prefs()
    if prefs.get(key) == value:
        return
    prefs[key] = value
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(prefs, indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        log.warning("could not save TUI preferences to %s: %s", path, exc)
