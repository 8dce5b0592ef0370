"""The tests mirror the package: a test of ``goldfive/<package>/`` lives in ``tests/<package>/``.

Only what spans the house (docs, import layers, the public API, the wire format, the wheel) and
the tests of goldfive's top-level modules stay directly in ``tests/``. A new file named after a
package (``tests/test_remote_x.py``) is refused here, with the folder it belongs in.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: File-name prefixes that mean "this tests that package", beyond the package's own name.
_ALIASES = {"ctl": "cli", "serve": "remote", "executor": "executors", "control": "controls", "approval": "approvals",
            "recording": "store", "replay": "store"}


def _misplaced(tests: Path, packages: set[str]) -> list[str]:
    wrong = []
    for test in sorted(tests.glob("test_*.py")):
        first = test.stem.removeprefix("test_").split("_")[0]
        home = first if first in packages else _ALIASES.get(first)
        if home in packages:
            wrong.append(f"{test.name} belongs in tests/{home}/")
    return wrong


def _packages() -> set[str]:
    return {p.name for p in (ROOT / "goldfive").iterdir() if (p / "__init__.py").exists() and p.name != "pb"}


def test_no_test_of_a_package_sits_at_the_top_of_tests() -> None:
    assert _misplaced(ROOT / "tests", _packages()) == []


def test_a_test_named_after_a_package_is_named_with_its_folder(tmp_path: Path) -> None:
    for name in ("test_remote_new.py", "test_serve_new.py", "test_notify_new.py"):
        (tmp_path / name).write_text("")
    assert _misplaced(tmp_path, _packages()) == ["test_remote_new.py belongs in tests/remote/", "test_serve_new.py belongs in tests/remote/"]


def test_each_package_folder_of_tests_names_a_package() -> None:
    helpers = {"fixtures", "chaos", "tui", "fleet", "__pycache__"}  # not packages of goldfive: fixtures, the adversarial pass, the UI, PostgreSQL fleets
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir()} - helpers
    assert folders <= _packages() | {"ray"}, sorted(folders - _packages())


def _lines_over(limit: int) -> list[str]:
    """Modules of goldfive/ and tui/ (generated protobuf code aside) longer than ``limit`` lines."""
    over = []
    for folder in ("goldfive", "tui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if (ROOT / "goldfive" / "pb") in path.parents:
                continue
            n = len(path.read_text(encoding="utf-8").splitlines())
            if n > limit:
                over.append(f"{path.relative_to(ROOT)}: {n}")
    return over


def test_no_module_is_800_lines_or_more() -> None:
    # CONVENTIONS rule 1: one concept per module, split a module before 800 lines.
    assert _lines_over(799) == []
