"""Installing to try: the core install runs simulate; extras are named by use; CI builds the
wheel and the sdist and runs the wheel in a fresh venv (.ci/run)."""

import re
import subprocess
import sys
import tomllib

from tests.paths import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS = PYPROJECT["project"]["optional-dependencies"]
TEST_ONLY = ("pytest", "hypothesis", "openai", "statsmodels", "pyarrow", "zstandard", "xllamacpp")


def _names(requirements):
    return {r.split(">")[0].split("=")[0].split("[")[0].strip().lower() for r in requirements}


def test_extras_are_named_by_use():
    assert {"frameworks", "parquet", "local", "test"} <= set(EXTRAS)
    assert _names(EXTRAS["frameworks"]) == {"zstandard"}  # inspect_ai's .eval logs
    assert _names(EXTRAS["parquet"]) == {"pyarrow"}
    assert "xllamacpp" in _names(EXTRAS["local"])
    assert "inspect" not in EXTRAS  # one name per extra: `frameworks` (0.1.0 had both)


def test_the_core_install_pulls_no_test_package():
    core = _names(PYPROJECT["project"]["dependencies"])
    assert not core & set(TEST_ONLY)


def test_simulate_runs_without_any_extra():
    """The README's first command, with every optional and test package made unimportable."""
    code = (
        "import sys\n"
        f"BLOCKED = {TEST_ONLY!r}\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ImportError(f'{name} is not installed')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from gatecal.cli import main\n"
        "sys.exit(main(['simulate', '--cases', '12', '--flip', '0.03,0.08', '--runs', '10']))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("suite: 12 cases")


def test_nothing_says_pip_install_gatecal_from_an_index():
    """gatecal is on no package index: no page, message or help may tell a user to
    ``pip install 'gatecal[...]'`` or ``pip install gatecal`` as if it were."""
    wrong = re.compile(r"pip install ['\"]?gatecal(\[|\b(?![-_/.@]))")
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "action.yml",
             *(ROOT / "docs").rglob("*.md"), *(ROOT / "gatecal").rglob("*.py"),
             *(ROOT / "action").rglob("*.py")]  # fmt: skip
    found = [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in files
             for m in wrong.finditer(f.read_text())]  # fmt: skip
    assert not found, found


def test_a_missing_extra_names_the_package_and_the_extra():
    text = (ROOT / "gatecal" / "readers" / "inspect.py").read_text()
    assert "pip install zstandard (gatecal's extra 'frameworks')" in text


def test_ci_builds_and_runs_the_wheel_in_a_fresh_venv():
    ci = (ROOT / ".ci" / "run").read_text()
    steps = [
        "pip install --quiet build",
        'python -m build --outdir "$dist" .',
        'python3 -m venv "$dist/venv"',
        '"$dist/venv/bin/pip" install --quiet "$dist"/gatecal-*.whl',
        'gatecal" simulate --cases 12 --flip 0.03,0.08 --runs 10',
    ]
    at = [ci.find(step) for step in steps]
    assert all(i >= 0 for i in at) and at == sorted(at), at
    assert "[test]" not in ci[at[2] :]  # the wheel alone, no test extra
