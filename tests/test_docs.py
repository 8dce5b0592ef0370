"""The documentation: the site builds with --strict, the README stays short, keeps its two
setup commands and links only to pages that exist, every Python example prints what its page
says, and every docs/ link in the code names a page and a section that exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"

#: The commands for a fresh machine, exactly as CI and people copy them.
MAIN_JOB = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && goldfive demo"
TESTS = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install uv==0.13.9 && uv pip install --compile-bytecode -e '.[test]'"
    " && bash scripts/system-deps.sh && python -m pytest"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def test_the_site_builds_with_strict_links_and_anchors(site: Path) -> None:
    assert (site / "index.html").exists()
    assert (site / "protocol" / "index.html").exists()


def test_the_readme_is_under_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines; move the detail into docs/"


@pytest.mark.parametrize("command", [MAIN_JOB, TESTS], ids=["main-job", "tests"])
def test_the_readme_keeps_its_setup_commands_as_they_are(command: str) -> None:
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert any(block.strip() == command for block in blocks), f"README.md no longer has this command in a sh block:\n{command}"


def test_the_readme_links_only_to_files_that_exist() -> None:
    links = re.findall(r"\]\(([\w./-]+)(?:#[\w-]*)?\)", README.read_text(encoding="utf-8"))
    missing = [link for link in links if "://" not in link and not (ROOT / link).exists()]
    assert links and missing == []


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def _examples(page: Path) -> list[tuple[str, str, str | None]]:
    """(where, code, what the page says it prints) for every ```python block of ``page``: the
    ```text block after "It prints:", or the `...` after "It prints" on one line; None when
    the page does not say."""
    text = page.read_text(encoding="utf-8")
    found = []
    for m in re.finditer(r"```python\n(.*?)```", text, re.S):
        after = text[m.end():]
        said = re.match(r"\s*It prints:\s*```text\n(.*?)```", after, re.S) or re.match(r"\s*It prints `([^`]*)`", after)
        where = f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
        found.append((where, m.group(1), said.group(1).strip() if said else None))
    return found


EXAMPLES = [example for page in _pages() for example in _examples(page)]


@pytest.mark.parametrize(("where", "code", "expected"), EXAMPLES, ids=[where for where, _, _ in EXAMPLES])
def test_every_python_example_prints_what_its_page_says(where: str, code: str, expected: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    assert expected is not None, f"{where}: say what the example prints after it, or make it a ```py fragment"
    exec(compile(code, where, "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.strip() == expected


def test_the_docs_have_python_examples() -> None:
    assert len(EXAMPLES) >= 5


#: A docs link in the code: docs/PAGE.md or docs/PAGE.md#ANCHOR.
_CITATION = re.compile(r"docs/([\w/.-]+\.md)(?:#([\w-]+))?")


def test_every_docs_link_in_the_code_names_a_page_and_section_that_exist(site: Path) -> None:
    cited = 0
    for folder in ("goldfive", "tui", "proto", "tests"):
        for source in sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".proto") and p != Path(__file__)):
            for page, anchor in _CITATION.findall(source.read_text(encoding="utf-8")):
                cited += 1
                where = f"{source.relative_to(ROOT)} cites docs/{page}" + (f"#{anchor}" if anchor else "")
                assert (DOCS / page).exists(), f"{where}: no such page"
                html = site / page.removesuffix(".md") / "index.html"
                if anchor:
                    assert f'id="{anchor}"' in html.read_text(encoding="utf-8"), f"{where}: no such section"
    assert cited >= 20
