"""Print goldfive's import graph from the AST: its circles and the arrows that run back up.

Run: python scripts/import_graph.py [--package goldfive|tui] [--all-arrows]

An *arrow* is one module naming another of the same package in an import statement: at the
top, inside a function, or under ``if TYPE_CHECKING`` (a type-only import still ties the two
modules together for a reader and for mypy). ``from goldfive import events`` is an arrow to
``goldfive.events``; ``from goldfive.run import RunContext`` one to ``goldfive.run`` (the
package's ``__init__``). Generated protobuf code (``goldfive.pb``) is left out.

A *circle* is a strongly connected set of two or more modules: each reaches every other by
arrows. The *arrows that run back up* are, in each circle, the ones that point against the
order the rest of its arrows imply: a small set whose removal leaves no circle, found by the
greedy method of Eades, Lin and Smyth (1993) with ties broken by name, so the figure is the
same on every run. Nothing here imports the code it reads.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Package name -> its folder under the repository (the TUI is installed as goldfive_tui).
PACKAGES = {"goldfive": "goldfive", "goldfive_tui": "tui"}
GENERATED = ("goldfive.pb",)

Arrow = tuple[str, str]


@dataclass(frozen=True)
class Graph:
    modules: frozenset[str]
    arrows: frozenset[Arrow]

    def out(self, module: str) -> list[str]:
        return sorted(b for a, b in self.arrows if a == module)


def module_files(package: str, root: Path = ROOT) -> dict[str, Path]:
    """Module name -> its file, for every module of ``package`` but generated code."""
    base = root / PACKAGES[package]
    found: dict[str, Path] = {}
    for path in sorted(base.rglob("*.py")):
        parts = [package, *path.relative_to(base).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if not name.startswith(GENERATED):
            found[name] = path
    return found


def _imported(module: str, is_package: bool, tree: ast.AST) -> Iterator[str]:
    """Every dotted name an import statement in ``tree`` names, functions included:
    ``from a.b import c`` gives ``a.b.c`` (``resolve`` falls back to ``a.b`` when ``c`` is
    not a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            yield from (f"{base}.{alias.name}" for alias in node.names)


def resolve(name: str, modules: set[str] | frozenset[str]) -> str:
    """The module ``name`` refers to: itself, or the nearest enclosing module ("" if none)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def build(package: str = "goldfive", root: Path = ROOT) -> Graph:
    files = module_files(package, root)
    names = set(files)
    folder = PACKAGES[package]
    arrows: set[Arrow] = set()
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name in _imported(module, path.name == "__init__.py", tree):
            if folder != package and (name == folder or name.startswith(folder + ".")):
                name = package + name[len(folder):]  # tui.x, imported by its folder's name
            if name.startswith(GENERATED):
                continue
            target = resolve(name, names)
            if target and target != module:
                arrows.add((module, target))
    return Graph(frozenset(names), frozenset(arrows))


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected sets of two or more modules, largest first (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    succ = {m: graph.out(m) for m in graph.modules}
    for start in sorted(graph.modules):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(succ[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(succ[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found, key=lambda c: (-len(c), c))


def back_arrows(graph: Graph, circle: Iterable[str]) -> list[Arrow]:
    """The arrows of ``circle`` that point against the order the others imply (greedy FAS)."""
    left = set(circle)
    arrows = {(a, b) for a, b in graph.arrows if a in left and b in left}
    head: list[str] = []
    tail: list[str] = []

    def outs(m: str) -> int:
        return sum(1 for a, b in arrows if a == m and b in left)

    def ins(m: str) -> int:
        return sum(1 for a, b in arrows if b == m and a in left)

    while left:
        moved = True
        while moved:
            moved = False
            for m in sorted(left):
                if outs(m) == 0:  # imports nothing left: it sits at the bottom
                    tail.insert(0, m)
                    left.discard(m)
                    moved = True
            for m in sorted(left):
                if ins(m) == 0:  # nothing left imports it: it sits at the top
                    head.append(m)
                    left.discard(m)
                    moved = True
        if left:
            m = max(sorted(left), key=lambda m: outs(m) - ins(m))
            head.append(m)
            left.discard(m)
    order = {m: i for i, m in enumerate(head + tail)}
    return sorted((a, b) for a, b in arrows if order[a] > order[b])


def report(graph: Graph, *, all_arrows: bool = False) -> tuple[int, int, str]:
    """(circles, arrows back up, the text to print)."""
    found = circles(graph)
    lines = [f"{len(graph.modules)} modules, {len(graph.arrows)} arrows"]
    total = 0
    for circle in found:
        back = back_arrows(graph, circle)
        total += len(back)
        lines.append(f"circle of {len(circle)}: {', '.join(circle)}")
        lines.extend(f"    back up: {a} -> {b}" for a, b in back)
    if all_arrows:
        lines.extend(f"{a} -> {b}" for a, b in sorted(graph.arrows))
    lines.append(f"{len(found)} circles, {total} arrows that run back up")
    return len(found), total, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--package", choices=sorted(PACKAGES), default="goldfive")
    ap.add_argument("--all-arrows", action="store_true", help="also list every arrow")
    args = ap.parse_args(argv)
    print(report(build(args.package), all_arrows=args.all_arrows)[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
