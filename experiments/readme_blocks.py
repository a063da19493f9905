"""Fill README.md's command blocks with what the commands really print.

A block is marked ``<!-- cmd-NAME:start -->`` ... ``<!-- cmd-NAME:end -->`` and holds a
fenced ``text`` block whose first line is ``$ gatecal ARGS``; this script runs the command
(from the repository root) and writes its output under that line. tests/project/test_readme.py
checks that every block is what the command prints.

Usage: python experiments/readme_blocks.py
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

from gatecal.cli import main as gatecal_main

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(
    r"(<!-- (cmd-[\w-]+):start -->\n```text\n\$ gatecal (.*?)\n)(.*?)(```\n<!-- \2:end -->)", re.S
)


def output(command: str) -> str:
    buffer = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(buffer):
            gatecal_main(shlex.split(command))
    finally:
        os.chdir(cwd)
    return buffer.getvalue()


def main() -> None:
    readme = ROOT / "README.md"
    text = readme.read_text()
    new = BLOCK.sub(lambda m: m.group(1) + output(m.group(3)) + m.group(5), text)
    if new != text:
        readme.write_text(new)
    print(f"README.md: {len(BLOCK.findall(text))} command blocks")


if __name__ == "__main__":
    os.environ.pop("GITHUB_STEP_SUMMARY", None)
    main()
