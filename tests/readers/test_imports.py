"""The readers import each other in one direction only: no cycle, not even through an
import inside a function (only imports under ``if TYPE_CHECKING:`` are left out, as they
never run). ``python tests/readers/test_imports.py`` prints the strongly connected
components of more than one module (none) and every edge."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "gatecal" / "readers"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module `tree` imports (absolute names), outside TYPE_CHECKING blocks."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                parent = ".".join([*base, *([node.module] if node.module else [])])
            else:
                parent = node.module or ""
            found.add(parent)
            found.update(f"{parent}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the readers modules it imports (a name imported from a package counts
    as its module when it is one, else as the package)."""
    paths = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = _imports(tree, name, path.name == "__init__.py")
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return components


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert sorted(c for c in strongly_connected(graph) if len(c) > 1) == [["a", "b", "c"]]


def test_imports_inside_functions_count_and_type_checking_ones_do_not() -> None:
    code = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from gatecal.readers import _data\n"
        "def f():\n    from gatecal.readers.junit import stream\n"
    )
    found = _imports(ast.parse(code), "gatecal.readers.x", False)
    assert "gatecal.readers.junit.stream" in found
    assert "gatecal.readers._data" not in found


def test_the_graph_sees_the_readers() -> None:
    graph = import_graph()
    assert "gatecal.readers._data" in graph["gatecal.readers._read"]
    assert "gatecal.readers.junit.stream" in graph["gatecal.readers.junit.reader"]


def test_readers_have_no_import_cycle() -> None:
    cycles = [c for c in strongly_connected(import_graph()) if len(c) > 1]
    assert cycles == []


if __name__ == "__main__":
    graph = import_graph()
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    for module in sorted(graph):
        print(f"{module} -> {', '.join(sorted(graph[module])) or '(nothing)'}")
    print(f"{len(graph)} modules; strongly connected components of more than one module:")
    for component in cycles:
        print("  " + " <-> ".join(component))
    if not cycles:
        print("  none")
    sys.exit(1 if cycles else 0)
