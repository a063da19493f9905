"""The public surface: names declared once in gatecal/__init__.pyi, loaded lazily."""

import ast
import subprocess
import sys
from pathlib import Path

import gatecal

STUB = Path(gatecal.__file__).with_suffix(".pyi")


def _declared() -> dict[str, str]:
    names = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert alias.asname in (None, alias.name), alias.name  # re-exported as itself
                assert alias.name not in names, f"{alias.name} declared twice"
                names[alias.name] = f"gatecal.{node.module}"
    return names


def test_every_declared_name_loads_from_its_module():
    declared = _declared()
    assert sorted(gatecal.__all__) == sorted(declared)
    for name, module in declared.items():
        value = getattr(gatecal, name)
        assert value is getattr(__import__(module, fromlist=[name]), name), name
        assert name in dir(gatecal)


def test_public_types_show_the_public_path():
    assert repr(gatecal.Suite).startswith("<class 'gatecal.Suite'")
    assert gatecal.simulate_gates.__module__ == "gatecal"


def test_import_gatecal_stays_light():
    code = (
        "import sys, gatecal, gatecal.cli, gatecal.evaluators; "
        "print(sorted(m for m in ('numpy', 'scipy', 'pandas', 'matplotlib', 'pydantic') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: What ``gatecal simulate --cases 12 --flip 0.03,0.08`` runs, beyond the command line's own
#: helpers and the model: its analysis, its renderer, the engines; no other command's.
SIMULATE_LOADS = {
    "gatecal._analyses.simulate",
    "gatecal._engines.exact",
    "gatecal._engines.montecarlo",
    "gatecal._engines.pool",
    "gatecal._engines.skipping",
    "gatecal._render.dispatch",
    "gatecal._render.simulate",
    "gatecal.cli.simulate",
}


def _a_command_part(module: str) -> bool:
    """A module that belongs to one command rather than to every one: an analysis, an
    engine, a renderer, a reader, a command module."""
    parts = module.split(".")
    if parts[0] != "gatecal" or len(parts) < 3:
        return parts[1:] in (["charts"], ["report"])
    if parts[1] == "cli":
        return not parts[2].startswith("_")
    return parts[1] in ("_analyses", "_engines", "_render", "readers", "evaluators")


def test_simulate_loads_only_what_it_runs():
    # the headline must start about as fast as numpy imports: each command imports only
    # what it runs (the command modules register when typer builds the command line, and
    # rendering a result loads only its own renderer)
    code = (
        "import contextlib, io, sys, gatecal.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = gatecal.cli.main(['simulate', '--cases', '12', '--flip', '0.03,0.08'])\n"
        "print(code, ' '.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    code, modules = out.stdout.split(" ", 1)
    loaded = set(modules.split())
    assert code == "0"
    commands = {m for m in loaded if _a_command_part(m)}
    commands -= {"gatecal.readers", "gatecal.readers._registry"}  # option names, no reader
    assert sorted(commands) == sorted(SIMULATE_LOADS)
    heavy = {"scipy", "pandas", "matplotlib", "pydantic", "rich", "pyarrow", "defusedxml"}
    assert {m.split(".")[0] for m in loaded} & heavy == set()
