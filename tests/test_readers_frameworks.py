"""The readers on the newest files of each framework (issue 21), written by the tools.

Each fixture's README (tests/fixtures/*/README.md) gives the command, the version and the
tool's own count; the expected values below are those counts (the tool's `success`,
JUnit outcome or summary line), not values read back from our reader.
"""

import contextlib
import io
from pathlib import Path

import pytest

from gatecal import RunsError, read_runs
from gatecal.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures"
JUNIT = FIXTURES / "junit"
INSPECT = FIXTURES / "inspect_ai"
DEEPEVAL = FIXTURES / "deepeval"
PROMPTFOO = FIXTURES / "promptfoo"


def _grid(data, build="healthy"):
    """{short case: outcome string over runs}: '.' pass, 'x' fail, '-' missing."""
    runs, cases, matrix = data.case_outcomes(build)
    names = data.short_names()
    symbol = {1: ".", 0: "x", -1: "-"}
    return {
        names[c]: "".join(symbol[matrix[i][j]] for i in range(len(runs)))
        for j, c in enumerate(cases)
    }


def _cli(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


# -- DeepEval: cases named with LLMTestCase(name=...) under -r 3 -------------------------

# DeepEval's own per-test-case `success`, in `order` (the README's table); each pytest
# test in junit.xml (test_named[<case>-i-3]) agrees
NAMED = {
    "named-repeat3": {  # DeepEval 4.3.1
        "capital-france": "x..", "spider-legs": "...", "tides-moon": ".x.", "tides-miss": "xxx",
    },
    "named-repeat3-v3.9": {  # DeepEval 3.9.9
        "capital-france": "..x", "spider-legs": "x..", "tides-moon": "...", "tides-miss": "xxx",
    },
}  # fmt: skip


@pytest.mark.parametrize("folder", sorted(NAMED))
def test_deepeval_named_cases_repeated_are_runs_not_duplicates(folder):
    (path,) = (DEEPEVAL / folder).glob("test_run_*.json")
    data = read_runs([path])
    assert len(data.runs("healthy")) == 3 and len(data.sessions()) == 1
    assert data.cases() == list(NAMED[folder])
    assert _grid(data) == NAMED[folder]
    assert data.checks() == ["Answer Relevancy", "Contains Keyword"]
    # the same invocation's JUnit file (pytest's own outcomes) reads the same
    junit = read_runs([DEEPEVAL / folder / "junit.xml"])
    assert list(_grid(junit).values()) == list(NAMED[folder].values())
    latest = read_runs([DEEPEVAL / folder / ".deepeval" / ".latest_test_run.json"])
    assert _grid(latest) == NAMED[folder]


def test_deepeval_names_shared_unequally_are_refused(tmp_path):
    import json

    (path,) = (DEEPEVAL / "named-repeat3").glob("test_run_*.json")
    document = json.loads(path.read_text(encoding="utf-8"))
    document["testCases"][3]["name"] = "capital-france"  # a spider-legs repeat renamed
    bad = tmp_path / "test_run_renamed.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(RunsError, match=r"names occur unequally often \('capital-france' 4x"):
        read_runs([bad])
