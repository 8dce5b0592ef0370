"""The core is usable without the TUI: importing it never pulls in textual or tui."""

from __future__ import annotations

import json
import subprocess
import sys

CORE_MODULES = ["goldfive", "goldfive.control", "goldfive.events", "goldfive.conv", "goldfive.types"]

_PROBE = f"""
import json, sys
for name in {CORE_MODULES!r}:
    __import__(name)
ui = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "tui"))
print(json.dumps({{"ui": ui, "loaded": [n for n in {CORE_MODULES!r} if n in sys.modules]}}))
"""


def test_importing_the_core_does_not_import_textual_or_tui() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["loaded"] == CORE_MODULES  # the probe really imported the core
    assert report["ui"] == [], f"the core imported UI modules: {report['ui']}"
