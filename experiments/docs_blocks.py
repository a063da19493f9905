"""Regenerate what the README and the docs site show: real output, never typed by hand.

Two kinds of block, in README.md and every page under docs/:

* ``<!-- cmd-NAME:start -->`` ... ``<!-- cmd-NAME:end -->`` holds a fenced ``text`` block
  whose first line is ``$ gatecal ARGS``, optionally piped to ``| head -n N`` or
  ``| tail -n N``. This script runs the command from the repository root and writes what it
  prints under that line, cut as the pipe says.
* ``<!-- file-NAME:start PATH -->`` ... ``<!-- file-NAME:end -->`` quotes a file that an
  experiment wrote (a transcript of real pytest or framework runs, under reports/), or a
  file a tutorial runs (in a ``python``, ``yaml``, ``javascript`` or ``bash`` fence, to copy).
  ``PATH#3`` quotes the transcript's third ``$ `` command with its output, ``PATH#3-5``
  the third to the fifth.

It also writes the two generated reference pages: docs/reference/cli.md from the command
tree itself (every command, argument and option, as ``--help`` prints them) and
docs/reference/api.md, one mkdocstrings entry per public name of gatecal/__init__.pyi.

tests/project/test_readme.py and tests/project/test_docs.py check that every block and both
pages are what this script would write. After changing a command's output or help, run it
once:

    python experiments/docs_blocks.py
"""

from __future__ import annotations

import ast
import contextlib
import html
import io
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CLI_PAGE = DOCS / "reference" / "cli.md"
API_PAGE = DOCS / "reference" / "api.md"

CMD = re.compile(
    r"(?P<head><!-- (?P<name>cmd-[\w-]+):start -->\n```text\n\$ gatecal (?P<command>.*?)\n)"
    r"(?P<body>.*?)(?P<tail>```\n<!-- (?P=name):end -->)",
    re.S,
)
FILE = re.compile(
    r"(?P<head><!-- (?P<name>file-[\w-]+):start (?P<path>[^\s#]+)(?:#(?P<sections>\d+(?:-\d+)?))?"
    r" -->\n```(?:text|python|yaml|javascript|bash)\n)"
    r"(?P<body>.*?)(?P<tail>```\n<!-- (?P=name):end -->)",
    re.S,
)
PIPE = re.compile(
    r"^(?P<args>.*?)(?: \| (?:(?P<cut>head|tail) -n (?P<lines>\d+)"
    r"|sed -n '/(?P<start>[^/']+)/,/(?P<end>[^/']+)/p'))?$"
)


@dataclass(frozen=True)
class Block:
    """One block of a page: where it is, what it shows now, what it should show."""

    page: Path
    name: str
    source: str  # the command line or the quoted path, as written on the page
    shown: str

    def expected(self) -> str:
        if self.name.startswith("cmd-"):
            return command_output(self.source)
        return quoted(self.source)


def pages() -> list[Path]:
    """README.md and every Markdown page of the site, in a fixed order."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def blocks(page: Path) -> Iterator[Block]:
    text = page.read_text()
    for m in CMD.finditer(text):
        yield Block(page, m["name"], m["command"], m["body"])
    for m in FILE.finditer(text):
        source = m["path"] + (f"#{m['sections']}" if m["sections"] else "")
        yield Block(page, m["name"], source, m["body"])


def command_output(command: str) -> str:
    """What ``gatecal COMMAND`` prints, run from the repository root, cut as its pipe says."""
    from gatecal.cli import main as gatecal_main

    m = PIPE.match(command)
    assert m is not None
    buffer = io.StringIO()
    cwd = os.getcwd()
    summary = os.environ.pop("GITHUB_STEP_SUMMARY", None)
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(buffer):
            gatecal_main(shlex.split(m["args"]))
    finally:
        os.chdir(cwd)
        if summary is not None:
            os.environ["GITHUB_STEP_SUMMARY"] = summary
    text = buffer.getvalue()
    lines = text.splitlines(keepends=True)
    if m["cut"]:
        n = int(m["lines"])
        text = "".join(lines[:n] if m["cut"] == "head" else lines[-n:])
    elif m["start"]:
        text = "".join(_sed_range(lines, m["start"], m["end"]))
    return text


def _sed_range(lines: list[str], start: str, end: str) -> Iterator[str]:
    """``sed -n '/START/,/END/p'``: each line from one matching START to the next matching END."""
    inside = False
    for line in lines:
        if inside:
            yield line
            inside = re.search(end, line) is None
        elif re.search(start, line):
            yield line
            inside = True


def quoted(source: str) -> str:
    """The file (or the transcript's ``$`` sections) that a file block quotes."""
    path, _, sections = source.partition("#")
    text = (ROOT / path).read_text()
    if not sections:
        return text
    first, _, last = sections.partition("-")
    parts = re.split(r"\n(?=\$ )", text.strip("\n"))
    commands = [p.strip("\n") for p in parts if p.startswith("$ ")]
    chosen = commands[int(first) - 1 : int(last or first)]
    if not chosen or len(chosen) != int(last or first) - int(first) + 1:
        raise ValueError(f"{source}: the transcript has {len(commands)} commands")
    return "\n\n".join(chosen) + "\n"


def fill(page: Path) -> int:
    """Rewrite the page's blocks with what they should show; return how many it has."""
    text = page.read_text()
    new = CMD.sub(lambda m: m["head"] + command_output(m["command"]) + m["tail"], text)
    new = FILE.sub(lambda m: m["head"] + quoted(_source(m)) + m["tail"], new)
    if new != text:
        page.write_text(new)
    return len(CMD.findall(text)) + len(FILE.findall(text))


def _source(m: re.Match[str]) -> str:
    return m["path"] + (f"#{m['sections']}" if m["sections"] else "")


# -- the generated reference pages ---------------------------------------------------------


def public_names() -> dict[str, list[str]]:
    """The public names of gatecal/__init__.pyi, grouped by the concept they come from."""
    tree = ast.parse((ROOT / "gatecal" / "__init__.pyi").read_text())
    groups: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            group = _group(node.module or "")
            groups.setdefault(group, []).extend(a.asname or a.name for a in node.names)
    return groups


def _group(module: str) -> str:
    """``_analyses.compare_oc`` -> ``compare``: the concept, whatever the module layout."""
    parts = [p for p in module.split(".") if p and p not in ("_analyses", "_model", "_common")]
    name = parts[0].lstrip("_") if parts else "gatecal"
    return name.split("_")[0]


#: The first section of the API page: the calls behind the commands, in the order a team
#: meets them.
START_HERE = (
    ("read_runs", "read your runs (JUnit XML, promptfoo, inspect_ai, DeepEval, CSV/JSONL/Parquet)"),
    ("RunsData", "what was read: verdicts, runs, cases"),
    ("recommend_gate", "the gate your known-good runs allow (`gatecal recommend`)"),
    ("Recommendation", "its result"),
    ("load_recommended_gate", "read back the gate `recommend --format json` wrote"),
    ("check_gate", "decide a CI run with that gate (`gatecal check`)"),
    ("GateCheck", "its decision and evidence"),
    ("Suite", "a suite of cases and checks, to model"),
    ("JudgeNoise", "how often the judge is wrong"),
    ("simulate_gates", "every gate's false alarm and detection, exact and simulated"),
    ("SimulationReport", "its result"),
    ("render", "any result as a table, markdown, CSV or JSON"),
)
#: Then one section per task: (title, the concepts of gatecal/__init__.pyi it gathers).
TASKS = (
    ("Read runs and labels", ("readers",)),
    ("Recommend a gate and keep it", ("recommend", "gatefile")),
    ("Decide a CI run", ("check",)),
    (
        "Model a suite and its gates",
        ("suite", "gates", "regression", "targets", "spec", "defaults"),
    ),
    ("Exact and simulated pass counts", ("simulate", "engines", "noise", "intervals", "seeds")),
    ("Policies and sequential gates", ("policies", "sequential")),
    ("Compare two builds", ("compare",)),
    ("Size a suite", ("plan",)),
    ("Measure the judge against labels", ("calibrate",)),
    ("Keep the run history and see the judge change", ("store", "history")),
    ("Render results", ("render", "tables")),
    ("Errors", ("validate",)),
)


def api_page() -> str:
    groups = public_names()
    placed = {c for _, concepts in TASKS for c in concepts}
    if set(groups) - placed:  # a new concept must be given its task
        raise ValueError(f"api page: no task for {sorted(set(groups) - placed)}")
    first = [name for name, _ in START_HERE]
    lines = [
        "# Python API",
        "",
        "<!-- Generated by experiments/docs_blocks.py from gatecal/__init__.pyi. Do not edit. -->",
        "",
        "Every public name of `gatecal`, from its docstring, grouped by task. Import them from",
        "`gatecal` itself (`gatecal.Suite`, `gatecal.check_gate`); the modules they live in are",
        "private and may move. `import gatecal` is cheap: each name loads when it is first used.",
        "",
        "## Start here",
        "",
        *[f"- [`{name}`](#gatecal.{name}): {what}" for name, what in START_HERE],
        "",
        "Every result has a one-line `repr`, shows as markdown in a notebook, and has",
        "`render(fmt)` and `to_frame()`. [Work from a notebook](../how-to/notebook.md) walks",
        "through them.",
        "",
    ]
    for name in first:
        lines += [f"::: gatecal.{name}", ""]
    for title, concepts in TASKS:
        names = [n for c in concepts for n in groups.get(c, []) if n not in first]
        if names:
            lines += [f"## {title}", ""]
            lines += [line for n in names for line in (f"::: gatecal.{n}", "")]
    return "\n".join(lines)


def cli_page() -> str:
    import typer

    from gatecal.cli import app

    root = typer.main.get_command(app)
    root_ctx = root.make_context("gatecal", ["--help"], resilient_parsing=True)
    lines = [
        "# Command line",
        "",
        "<!-- Generated by experiments/docs_blocks.py from the command tree. Do not edit. -->",
        "",
        "Every command and option, as `gatecal COMMAND --help` prints them.",
        "Exit codes and output formats: [contracts](contracts.md).",
        "",
        "```text",
        root.get_usage(root_ctx).replace("Usage: ", "", 1).strip(),
        "```",
        "",
        _text(root.help or ""),
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    commands = root.commands  # type: ignore[attr-defined]
    for name, command in commands.items():
        lines.append(f"| [`{name}`](#{name}) | {_cell(command.get_short_help_str(200))} |")
    lines.append("")
    for name, command in commands.items():
        ctx = command.make_context(name, [], parent=root_ctx, resilient_parsing=True)
        usage = command.get_usage(ctx).replace("Usage: ", "", 1).strip()
        lines += [f"## {name}", "", "```text", usage, "```", "", _text(command.help or ""), ""]
        lines += ["| argument or option | meaning |", "|---|---|"]
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:  # an argument without help: typer shows it in the usage line
                record = (param.name or "", "")
            names, help_text = record
            names = re.sub(r" <[^<>]*>$", "", names)  # an argument's Python type
            if "|" in names or "`" in names:
                raise ValueError(f"{name} {names}: cannot sit in a code span of a table")
            lines.append(f"| `{names}` | {_cell(help_text)} |")
        lines.append("")
    return "\n".join(lines)


def _text(help_text: str) -> str:
    """A command's help as Markdown paragraphs: click's no-rewrap marks removed, and
    nothing in it read as Markdown or HTML."""
    kept = "\n".join(line for line in help_text.splitlines() if line.strip() != "\b").strip()
    return re.sub(r"([\\`*_\[\]#|])", r"\\\1", html.escape(kept, quote=False))


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (and not read as Markdown or HTML)."""
    return _text(" ".join(text.split()))


def reference_pages() -> dict[Path, str]:
    return {CLI_PAGE: cli_page(), API_PAGE: api_page()}


def main() -> None:
    for path, text in reference_pages().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        print(f"{path.relative_to(ROOT)}: generated")
    for page in pages():
        count = fill(page)
        if count:
            print(f"{page.relative_to(ROOT)}: {count} blocks")


if __name__ == "__main__":
    main()
