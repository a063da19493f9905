"""The package's layout: imports point one way, so every concept can be read, and moved,
without the ones above it.

An import inside a function counts as an edge (it only postpones the cycle); an import
under ``if TYPE_CHECKING:`` does not (it never runs).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import ROOT

PACKAGE = ROOT / "gatecal"
FACE = "gatecal"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(x) for stmt in node.body for x in ast.walk(stmt))
    return skip


def _imported_from(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` in `package` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that module `name` imports, at any depth of its code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip = _type_checking_nodes(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            target = _imported_from(node, package)
            # (module, whether a name is used from it): `from a import b` runs a, and uses
            # its name b unless b is a module of its own
            candidates = [(target, False)]
            candidates += [(f"{target}.{alias.name}", True) for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [(alias.name, True) for alias in node.names]
        else:
            continue
        for candidate, uses in candidates:
            # `import a.b.c` runs a, a.b and a.b.c: the deepest module of the package it names
            while candidate and candidate not in modules:
                candidate = candidate.rpartition(".")[0]
            if not candidate or candidate == name:
                continue
            # a module's own packages run before it anyway: no edge, except to the package
            # face when a name is used from it (its version, a lazily loaded public name)
            if name.startswith(candidate + ".") and not (candidate == FACE and uses):
                continue
            found.add(candidate)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle_through_a_function_import(tmp_path):
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import gatecal.cli\n"
    source += "def f():\n    from gatecal import charts\n"
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    assert imports_of("gatecal.probe", path, _modules()) == {"gatecal.charts"}


def test_no_module_of_gatecal_imports_itself_through_others():
    assert cycles(import_graph()) == []


def test_the_analyses_are_concept_packages():
    flat = sorted(p.name for p in (PACKAGE / "_analyses").glob("*.py"))
    assert len(flat) <= 6, flat


# -- the layers ------------------------------------------------------------------------------

#: The rooms of gatecal, top to bottom, and the rooms each may import (DESIGN.md, "Layout"):
#: cli -> _render/charts/report -> _analyses -> _engines -> _model -> _common; readers feed
#: _analyses; evaluators stand beside; inside _analyses noise, sequential, simulate ->
#: policies -> plan -> recommend -> check, compare and calibrate beside them. A room is a
#: top-level module or folder of gatecal, or a concept of _analyses; ``gatecal`` is the
#: package face (``__init__``) and ``_version`` the leaf that holds the package's version.
BASE = {"_common", "_version"}
MODEL = BASE | {"_model"}
BELOW_ANALYSES = MODEL | {"_engines", "readers"}
FIRST = {"_analyses.noise", "_analyses.sequential", "_analyses.simulate"}
ANALYSES = {
    *FIRST,
    "_analyses",
    "_analyses.policies",
    "_analyses.plan",
    "_analyses.recommend",
    "_analyses.check",
    "_analyses.compare",
    "_analyses.calibrate",
    "_analyses.history",
}
LAYERS: dict[str, set[str]] = {
    "_version": set(),
    "_common": {"_version"},
    "_model": BASE,
    "_engines": MODEL,
    "readers": MODEL,
    "evaluators": BASE,
    "_analyses": set(),  # its __init__ names the floor, and imports nothing
    "_analyses.noise": BELOW_ANALYSES,
    "_analyses.sequential": BELOW_ANALYSES,
    "_analyses.simulate": BELOW_ANALYSES,
    "_analyses.policies": BELOW_ANALYSES | FIRST,
    "_analyses.plan": BELOW_ANALYSES | FIRST | {"_analyses.policies"},
    "_analyses.recommend": BELOW_ANALYSES | FIRST | {"_analyses.policies", "_analyses.plan"},
    "_analyses.check": BELOW_ANALYSES
    | FIRST
    | {"_analyses.policies", "_analyses.plan", "_analyses.recommend"},
    "_analyses.compare": BELOW_ANALYSES | FIRST,
    "_analyses.calibrate": BELOW_ANALYSES | FIRST,
    "_analyses.history": BELOW_ANALYSES | {"_analyses.compare"},
    "store": MODEL | {"readers"},
    "pytest_plugin": MODEL | {"readers"},
    "_render": BELOW_ANALYSES | ANALYSES,
    "charts": BELOW_ANALYSES | ANALYSES,
    "report": BELOW_ANALYSES | ANALYSES | {"_render", "charts"},
    "cli": BELOW_ANALYSES | ANALYSES | {"_render", "charts", "report", "store", "evaluators", FACE},
    FACE: BASE,  # the public names load lazily, from the stub
    "__main__": {"cli"},
}


def room(module: str) -> str:
    """The room of a module: ``gatecal.cli.check`` is in ``cli``, ``gatecal._analyses.check.gate``
    in ``_analyses.check``, ``gatecal`` (the face) in ``gatecal``."""
    parts = module.split(".")[1:]
    if not parts:
        return FACE
    if parts[0] == "_analyses" and len(parts) > 1:
        return f"_analyses.{parts[1]}"
    return parts[0]


def wrong_floor(graph: dict[str, set[str]]) -> list[str]:
    """Every import from one room into another that the table does not allow."""
    return sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if room(a) != room(b) and room(b) not in LAYERS[room(a)]
    )


def test_every_module_is_in_a_room_of_the_table():
    assert sorted({room(m) for m in _modules()} - set(LAYERS)) == []


def test_the_layer_check_finds_an_import_up_and_one_through_the_face(tmp_path):
    graph = {
        "gatecal._model.gates": {"gatecal._common.validate", "gatecal._analyses.noise.bounds"},
        "gatecal._analyses.plan.suite": {"gatecal._analyses.policies.rules"},
        "gatecal._analyses.policies.rules": {"gatecal._analyses.plan.suite"},
    }
    assert wrong_floor(graph) == [
        "gatecal._analyses.policies.rules -> gatecal._analyses.plan.suite",
        "gatecal._model.gates -> gatecal._analyses.noise.bounds",
    ]
    source = "def f():\n    import gatecal\n    return gatecal.__version__\n"
    source += "from gatecal import charts\n"
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    found = imports_of("gatecal._common.probe", path, _modules())
    assert found == {"gatecal", "gatecal.charts"}
    assert wrong_floor({"gatecal._common.probe": found}) == [
        "gatecal._common.probe -> gatecal",
        "gatecal._common.probe -> gatecal.charts",
    ]


def test_imports_point_down_the_layers():
    assert wrong_floor(import_graph()) == []


def test_the_version_is_one_leaf_the_face_and_the_project_share():
    import tomllib

    import gatecal
    from gatecal import _version

    assert imports_of("gatecal._version", PACKAGE / "_version.py", _modules()) == set()
    assert gatecal.__version__ == _version.__version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == _version.__version__


def borrowed_private_names(modules: dict[str, Path]) -> list[str]:
    """Every private name (``_x``) one room imports from another's module: what a room
    shares has a public name in its folder (``from gatecal._analyses.noise.tails import
    gate_fail_probabilities``); its private names are its own."""
    found = []
    for name, path in sorted(modules.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _imported_from(node, package)
            if not target.startswith(FACE) or room(target) == room(name):
                continue
            found += [
                f"{name} <- {target}.{alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
    return found


def test_the_borrow_check_finds_a_private_name_from_another_room(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from gatecal._analyses.noise.tails import _failing_below, gate_fail_probabilities\n"
        "from gatecal._analyses.recommend.gate import _case_noises\n",
        encoding="utf-8",
    )
    found = borrowed_private_names({"gatecal._analyses.recommend.runs": probe})
    assert found == [
        "gatecal._analyses.recommend.runs <- gatecal._analyses.noise.tails._failing_below"
    ]


def test_no_room_borrows_another_rooms_private_names():
    assert borrowed_private_names(_modules()) == []


# -- no room outgrows its door ---------------------------------------------------------------

#: A module is read in one sitting: split it along its own sections before it passes this.
MAX_LINES = 750


def over_the_line(root: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """Every module under `root` longer than `limit` lines, with its length."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            out[path.relative_to(root.parent).as_posix()] = lines
    return out


def test_the_line_counter_counts_lines(tmp_path):
    package = tmp_path / "gatecal"
    (package / "sub").mkdir(parents=True)
    (package / "short.py").write_text("x = 1\n" * 750, encoding="utf-8")
    (package / "sub" / "long.py").write_text("x = 1\n" * 751, encoding="utf-8")
    assert over_the_line(package) == {"gatecal/sub/long.py": 751}


def test_no_module_is_over_750_lines():
    assert over_the_line(PACKAGE) == {}
