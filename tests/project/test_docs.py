"""The docs site: every shown output is real, the reference is complete, the build is strict.

experiments/docs_blocks.py regenerates everything checked here; run it after changing a
command's output or help.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import docs_blocks
from tests.paths import ROOT
from tests.regen import assert_same

BLOCKS = [b for page in docs_blocks.pages() for b in docs_blocks.blocks(page)]


def _id(block):
    return f"{block.page.relative_to(ROOT)}:{block.name}"


@pytest.mark.parametrize("block", BLOCKS, ids=_id)
def test_every_shown_output_is_real(block, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert block.shown.strip(), f"{_id(block)} is empty: run python experiments/docs_blocks.py"
    assert_same(block.expected(), block.shown, _id(block))


def test_the_pages_show_real_output():
    pages = {b.page.relative_to(ROOT).as_posix() for b in BLOCKS}
    assert {"README.md", "docs/index.md", "docs/tutorials/pytest.md"} <= pages
    assert len(BLOCKS) >= 30


def test_no_output_block_is_typed_by_hand():
    """A ```text block that shows a gatecal command's output must be a generated block."""
    for page in docs_blocks.pages():
        text = page.read_text()
        generated = [m.span() for m in docs_blocks.CMD.finditer(text)]
        generated += [m.span() for m in docs_blocks.FILE.finditer(text)]
        for m in re.finditer(r"```text\n\$ gatecal ", text):
            inside = any(a <= m.start() < b for a, b in generated)
            assert inside, f"{page.relative_to(ROOT)}: a hand-typed gatecal output at {m.start()}"


@pytest.mark.parametrize("path", list(docs_blocks.reference_pages()), ids=lambda p: p.name)
def test_reference_pages_are_generated_from_the_code(path):
    expected = docs_blocks.reference_pages()[path]
    assert path.read_text() == expected, f"{path.name} is stale: run experiments/docs_blocks.py"


def test_every_public_name_is_in_the_api_reference():
    stub = ast.parse((ROOT / "gatecal" / "__init__.pyi").read_text())
    names = {
        a.asname or a.name for n in stub.body if isinstance(n, ast.ImportFrom) for a in n.names
    }
    listed = re.findall(r"^::: gatecal\.(\w+)$", docs_blocks.API_PAGE.read_text(), re.M)
    assert names and names == set(listed) and len(listed) == len(set(listed))  # each once


def test_the_api_reference_starts_with_the_calls_a_team_uses_first():
    """Grouped by task, opening on read_runs, recommend_gate and check_gate (it opened on
    CORRECTION_METHODS, the first name of the alphabetically first module)."""
    page = docs_blocks.API_PAGE.read_text()
    sections = re.findall(r"^## (.+)$", page, re.M)
    assert sections[0] == "Start here" and "Decide a CI run" in sections
    first = re.findall(r"^::: gatecal\.(\w+)$", page, re.M)[:6]
    assert first[0] == "read_runs" and {"recommend_gate", "check_gate"} <= set(first)


def test_every_command_and_option_is_in_the_cli_reference():
    import typer

    from gatecal.cli import app

    page = docs_blocks.CLI_PAGE.read_text()
    root = typer.main.get_command(app)
    assert root.commands
    for name, command in root.commands.items():
        assert f"\n## {name}\n" in page, name
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            if getattr(param, "hidden", False):  # an old spelling kept working, not taught
                assert f"`{param.opts[0]}`" not in section, f"{name} {param.opts[0]}"
                continue
            for opt in param.opts:
                if opt.startswith("-"):
                    assert opt in section, f"{name} {opt}"
                else:  # an argument, by its metavar
                    assert f"`{param.metavar or opt.upper()}`" in section, f"{name} {opt}"


def test_the_build_is_strict():
    config = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^strict: true$", config, re.M)
    assert re.search(r"^use_directory_urls: false$", config, re.M)  # opens from disk
    nav_pages = re.findall(r":\s+(\S+\.md)$", config, re.M)
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert set(nav_pages) == on_disk


@pytest.mark.slow
def test_the_site_builds_without_a_warning(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs
    site = tmp_path / "site"
    result = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WARNING" not in result.stderr
    index = (site / "index.html").read_text()
    assert 'href="tutorials/pytest.html"' in index  # links work from disk
    # nothing loads from the network: no script from a CDN, no web font
    assert 'src="http' not in index and "fonts.googleapis" not in index
    api = (site / "reference" / "api.html").read_text()
    assert 'id="gatecal.check_gate"' in api
    assert ":func:" not in api  # Sphinx roles dropped by experiments/docs_hooks.py


def test_the_notebook_examples_run(monkeypatch):
    import contextlib
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(ROOT)
    page = (ROOT / "docs" / "how-to" / "notebook.md").read_text()
    namespace: dict[str, object] = {}
    try:
        for code in re.findall(r"```python\n(.*?)```", page, re.S):
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)
    finally:
        plt.close("all")
    assert namespace["recommendation"].cases == 12


def test_every_path_the_pages_name_exists():
    """Files move (tests into folders, modules into packages): a page must not point at one
    that is gone."""
    pattern = re.compile(r"`((?:tests|experiments|reports|gatecal|docs)/[\w./-]*\w/?)`")
    for page in docs_blocks.pages():
        for path in pattern.findall(page.read_text()):
            assert (ROOT / path).exists(), f"{page.relative_to(ROOT)} names {path}"


def test_every_yaml_block_of_the_docs_parses():
    """A workflow or config a reader copies must load: an unquoted `run: echo "...: ..."`
    is not YAML (the Action page's first example was not)."""
    yaml = pytest.importorskip("yaml")  # PyYAML, mkdocs' own dependency
    for page in docs_blocks.pages():
        for block in re.findall(r"^```yaml\n(.*?)^```", page.read_text(), re.S | re.M):
            try:
                yaml.safe_load(block)
            except yaml.YAMLError as exc:
                pytest.fail(f"{page.relative_to(ROOT)}: {exc}\n{block}")
