"""gatecal.render is one singledispatch: each renderer registers its own type, a result's
class names its renderer module, and a new result type needs no file but its own two."""

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

import gatecal
from gatecal._common.contracts import json_header
from gatecal._common.display import Displayed
from gatecal._render.dispatch import RESULT_TYPES, written


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Tally(Displayed):
    """A result no gatecal module knows: its analysis is this class, its renderer below."""

    passed: int
    cases: int

    def summary(self) -> str:
        return f"{self.passed} of {self.cases} cases passed"

    def to_dict(self) -> dict[str, Any]:
        return {**json_header("check"), "passed": self.passed, "cases": self.cases}


@gatecal.render.register
def _render_tally(result: Tally, fmt: str = "table", *, width: int = 3) -> str:
    # a format's writer is handed the result
    return written(result, fmt, table=lambda r: f"{r.passed:>{width}}/{r.cases}\n")


def test_a_new_result_type_is_its_class_and_its_registered_renderer():
    tally = Tally(passed=11, cases=12)
    assert gatecal.render(tally) == " 11/12\n"
    assert gatecal.render(tally, "table", width=1) == "11/12\n"
    document = json.loads(gatecal.render(tally, "json"))  # the JSON is its own to_dict()
    assert document == json.loads(json.dumps(tally.to_dict()))
    assert list(document)[:3] == ["format", "version", "gatecal_version"]
    assert tally.render("json") == gatecal.render(tally, "json")
    assert repr(tally) == "<gatecal.Tally: 11 of 12 cases passed>"
    with pytest.raises(gatecal.ParameterError, match=r"`fmt` must be one of table, json \(got"):
        gatecal.render(tally, "csv")
    with pytest.raises(gatecal.ParameterError, match="`options` not taken for Tally"):
        gatecal.render(tally, "table", top=3)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Late(Displayed):
    """A result whose renderer module nothing has imported: the class names it."""

    _renderer: ClassVar[str] = "late_renderer"

    passed: int


def test_a_result_names_its_renderer_and_the_first_render_loads_it(tmp_path, monkeypatch):
    (tmp_path / "late_renderer.py").write_text(
        textwrap.dedent(
            """
            import gatecal
            from tests.render.test_dispatch import Late

            @gatecal.render.register
            def render_late(result: Late, fmt: str = "table") -> str:
                return f"late {result.passed}\\n"
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "late_renderer", raising=False)
    assert gatecal.render.dispatch(Late) is gatecal.render.registry[object]  # none yet
    assert gatecal.render(Late(passed=4)) == "late 4\n"
    assert "late_renderer" in sys.modules
    assert gatecal.render.dispatch(Late).__name__ == "render_late"


@pytest.mark.parametrize("kind", RESULT_TYPES)
def test_every_result_type_names_the_module_that_registers_it(kind):
    cls = getattr(gatecal, kind)
    __import__(cls._renderer)
    assert gatecal.render.dispatch(cls) is not gatecal.render.registry[object], kind


def test_rendering_one_result_loads_its_own_renderer_only():
    code = (
        "import sys, gatecal\n"
        "design = gatecal.plan_compare(cases=8, rate=0.05, samples=20, max_runs=2)\n"
        "gatecal.render(design, 'json')\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('gatecal._render.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["gatecal._render.compare", "gatecal._render.dispatch"]


def test_a_pair_renders_only_when_the_second_takes_the_first():
    suite = gatecal.Suite.uniform(cases=4)
    report = gatecal.simulate_gates(suite, n_runs=20, flips=[0.05])
    with pytest.raises(
        gatecal.ParameterError, match=r"must be a gatecal result .* \(got 'tuple'\)"
    ):
        gatecal.render((report, report))
    with pytest.raises(gatecal.ParameterError, match=r"\(got 'tuple'\)"):
        gatecal.render((report,))
