"""The wheel installs goldfive and goldfive_tui, nothing else at the top level (a top-level
"tui" would clash with any other project's), every package of the source tree is in it, and
none of the TUI's test-only code (scripted sources, the scripted story, the preview script)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_has_only_goldfive_and_goldfive_tui_at_the_top_and_every_package(tmp_path: Path) -> None:
    # Built from a copy without the tree's build/ (setuptools stages files there and would
    # ship a module since deleted from the tree) nor its virtual environments.
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("build", "dist", ".venv*", ".git", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(src)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    [wheel] = tmp_path.glob("goldfive-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert top == {"goldfive", "goldfive_tui"}
    in_wheel = {str(Path(n).parent) for n in names if n.endswith("__init__.py")}
    in_tree = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "goldfive").rglob("__init__.py")}
    in_tree |= {str(Path("goldfive_tui") / p.parent.relative_to(ROOT / "tui")) for p in (ROOT / "tui").rglob("__init__.py")}
    assert in_tree <= in_wheel, f"packages missing from the wheel: {sorted(in_tree - in_wheel)}"
    assert "goldfive_tui/styles/app.tcss" in names and "goldfive/prompts/plan_generate.system.txt" in names
    tui_modules = {n for n in names if n.startswith("goldfive_tui/") and n.endswith(".py")}
    assert not {"goldfive_tui/scenario.py", "goldfive_tui/preview.py", "goldfive_tui/runs/scripted.py"} & tui_modules
    wheel_zip = zipfile.ZipFile(wheel)
    for name in sorted(tui_modules):
        text = wheel_zip.read(name).decode()
        for test_only in ("class ScriptedSource", "class ScriptedRuns", "class DemoScript", "class PacedDemoSource"):
            assert test_only not in text, f"{test_only} ships in {name}: it belongs in tests/tui"
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "goldfive = goldfive_tui.entry:main" in zipfile.ZipFile(wheel).read(entry).decode()
