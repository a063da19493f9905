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
