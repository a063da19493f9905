"""Parameter descriptions that several public functions share, written once.

A docstring line that holds only ``%(name)s`` stands for the block ``SHARED[name]``,
indented as that line is. :func:`shared_docs` expands it when the function is defined, so
``help()`` and ``__doc__`` show the whole text; the documentation site expands it the same
way from the sources, by the Griffe extension ``docs/griffe_shared_docs.py``. (scipy's
``doccer`` and pandas's ``@doc`` share their parameters' words the same way.) A change to
what ``suite`` or ``noise`` means is then one edit, and every function that takes them
says the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["SHARED", "expand", "shared_docs"]

_F = TypeVar("_F", bound=Callable[..., Any])

_SUITE = """suite : Suite
    The cases, their checks and their true verdicts."""
_BUILD = """build : {"healthy", "regressed"}
    Which of the suite's truth matrices to use."""
_NOISE = """noise : JudgeNoise
    The judge's error rates."""

# The known-good runs the examples of check_gate, recommend_gate and compare_builds start
# from (each example stays whole on the site and in help(): it runs as it reads).
_NIGHTLY = """>>> import json, pathlib, random, tempfile
>>> import gatecal
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> rng = random.Random(7)  # 30 nightly runs of 20 cases: 3 flaky cases, 17 stable ones
>>> rows = [
...     {"run": f"night-{r:02}", "case": f"case-{c:02}",
...      "passed": rng.random() > (0.3 if c < 3 else 0.002)}
...     for r in range(30) for c in range(20)
... ]
>>> _ = (folder / "nightly.jsonl").write_text("".join(json.dumps(x) + "\\n" for x in rows))
>>> nightly = gatecal.read_runs([folder / "nightly.jsonl"])"""

#: The shared blocks, by the name a docstring's ``%(name)s`` line gives.
SHARED: dict[str, str] = {
    "suite_noise": f"{_SUITE}\n{_NOISE}",
    "suite_build_noise": f"{_SUITE}\n{_BUILD}\n{_NOISE}",
    "nightly_runs_example": _NIGHTLY,
}

_LINE = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def expand(doc: str) -> str:
    """`doc` with each line that holds only ``%(name)s`` replaced by ``SHARED[name]``,
    every line of it indented as the placeholder was. An unknown name is a KeyError: a
    misspelt placeholder never reaches a reader."""

    def block(match: re.Match[str]) -> str:
        indent, name = match.groups()
        return "\n".join(indent + line for line in SHARED[name].splitlines())

    return _LINE.sub(block, doc)


def shared_docs(func: _F) -> _F:
    """Decorator: expand the shared blocks of `func`'s docstring (:func:`expand`)."""
    if func.__doc__:
        func.__doc__ = expand(func.__doc__)
    return func
