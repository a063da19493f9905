import json
import math

import numpy as np
import pytest

import gatecal
from experiments import article_transcripts
from gatecal import evaluators as ev
from tests.conftest import run_cli
from tests.paths import ROOT

ARTICLE_IDS = [
    "refund-annual", "refund-monthly", "storage-pro", "support-hours", "sso-plan", "data-region",
    "api-rate-limit", "backup-retention", "macos-agent", "reset-link", "extra-seat", "trial-card",
]  # fmt: skip


def test_dataset_has_the_article_cases():
    cases = ev.load_golden()
    assert [c.id for c in cases] == ARTICLE_IDS
    assert all(c.question and c.documents and c.expected_facts for c in cases)


def test_healthy_passes_all_and_regressed_fails_three_as_in_the_article():
    healthy = ev.run_golden("healthy")
    assert healthy.pass_rate == 1.0 and healthy.failed_ids() == []
    regressed = ev.run_golden("regressed")
    assert regressed.pass_rate == 0.75
    assert regressed.failed_ids() == ["refund-annual", "sso-plan", "extra-seat"]
    by_id = {r.id: r for r in regressed.results}
    assert by_id["refund-annual"].verdicts == (False, False, False)  # hallucinated 60 days
    assert by_id["sso-plan"].verdicts == (False, False, False)  # off topic
    assert by_id["extra-seat"].verdicts == (True, True, False)  # wrong price: only code sees it


def test_call_counts_of_one_golden_run():
    cases = ev.load_golden()
    model = ev.ScriptedModel.for_build("healthy", cases)
    assistant = ev.SupportAssistant(model)
    judge = ev.RuleBasedJudge()
    ev.EvalRunner(assistant, judge).run(cases)
    assert (assistant.calls, model.calls, judge.calls) == (12, 12, 24)


def test_assistant_prompt_wiring():
    judge = ev.RecordingJudge("an answer")
    assistant = ev.SupportAssistant(judge)
    assert assistant.answer("Q?", ["doc one", "doc two"]) == "an answer"
    assert judge.prompts == ["Context:\ndoc one\ndoc two\n\nQuestion: Q?"]
    assert "If the context does not contain the answer" in assistant.system


def test_gate_raises_naming_rate_threshold_and_cases():
    ev.run_golden("healthy").require_pass_rate(0.90)  # returns normally
    with pytest.raises(AssertionError) as info:
        ev.run_golden("regressed").require_pass_rate(0.90)
    assert str(info.value) == (
        "pass rate 0.75 is below the 0.90 threshold; "
        "failing cases: [refund-annual, sso-plan, extra-seat]"
    )
    for bad in (1.5, -0.1, math.nan, True, "0.9"):
        with pytest.raises(ValueError, match="`threshold` must be a number in"):
            ev.run_golden("healthy").require_pass_rate(bad)


def test_a_failing_judge_names_the_case():
    def flaky_network(prompt):
        raise ConnectionError("connection reset")

    with pytest.raises(
        ev.GoldenRunError, match="case 'refund-annual': the judge raised ConnectionError"
    ):
        ev.run_golden("healthy", flaky_network)
    with pytest.raises(
        ev.GoldenRunError,
        match=r"case 'refund-annual': the judge must reply with text \(got None\)",
    ):
        ev.run_golden("healthy", lambda prompt: None)


def _write(tmp_path, rows):
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(rows))
    return path


GOOD = {"id": "a", "question": "q", "context": ["c"], "expectedFacts": ["f"]}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "must be a non-empty JSON list of rows"),
        ({"id": "a"}, "must be a non-empty JSON list of rows"),
        (
            [GOOD, {k: v for k, v in GOOD.items() if k != "question"} | {"id": "b"}],
            "row 2 ('b'): missing field 'question'",
        ),
        ([GOOD, GOOD], "row 2 ('a'): duplicate id 'a'"),
        ([GOOD | {"context": []}], "row 1 ('a'): field 'context' must be a non-empty list"),
        (
            [GOOD | {"expectedFacts": [3]}],
            "row 1 ('a'): field 'expectedFacts' must hold non-empty strings",
        ),
        (["not a row"], "row 1: must be an object"),
    ],
)
def test_bad_datasets_are_named(tmp_path, rows, message):
    path = _write(tmp_path, rows)
    with pytest.raises(ev.GoldenDataError) as info:
        ev.load_golden(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_unreadable_dataset(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ev.GoldenDataError, match="cannot read a JSON dataset"):
        ev.load_golden(path)


def test_suite_spec_round_trip_and_engine_bridge():
    spec = ev.suite_spec(ev.run_golden("healthy"), ev.run_golden("regressed"))
    suite = gatecal.suite_from_spec(spec)
    assert suite.cases == tuple(ARTICLE_IDS)
    assert [(c.name, c.kind) for c in suite.checks] == list(ev.GOLDEN_CHECKS)
    assert suite.failing("regressed") == 3
    assert gatecal.suite_to_spec(suite) == spec
    # the golden suite has the article's shape, so its healthy build matches the uniform one
    noise = gatecal.JudgeNoise.flip(0.03)
    a = gatecal.exact_pass_counts(suite, "healthy", noise)
    b = gatecal.exact_pass_counts(gatecal.Suite.uniform(), "healthy", noise)
    # two suites, two orders of checks: equal to rounding, not to the last bit
    np.testing.assert_allclose(a.pmf, b.pmf, rtol=1e-13, atol=1e-300)


def test_toml_suite_spec(tmp_path):
    path = tmp_path / "suite.toml"
    path.write_text(
        'format = "gatecal-suite/1"\ncases = ["a", "b"]\n'
        '[[checks]]\nname = "relevancy"\nkind = "judge"\n'
        '[[checks]]\nname = "facts"\nkind = "code"\n'
        "[truth]\nhealthy = [[true, true], [true, true]]\nregressed = [[true, false], [true, true]]\n"
    )
    suite = gatecal.load_suite(path)
    assert suite.cases == ("a", "b") and suite.failing("regressed") == 1


SPEC = {
    "cases": ["a"],
    "checks": [{"name": "j", "kind": "judge"}],
    "truth": {"healthy": [[True]], "regressed": [[False]]},
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "v2"}, "`format` must be 'gatecal-suite/1' (got 'v2')"),
        ({"cases": []}, "`cases` must be a non-empty list of case ids (got [])"),
        ({"cases": ["a", "a"]}, "`cases` must be unique (got 'a')"),
        (
            {"checks": [{"name": "j", "kind": "llm"}]},
            "`checks[0].kind` must be 'judge' or 'code' (got 'llm')",
        ),
        ({"checks": [{"kind": "judge"}]}, "`checks[0]` must be an object with a `name`"),
        ({"truth": {"healthy": [[True]]}}, "`truth.regressed` must be a list of 1 rows"),
        (
            {"truth": {"healthy": [[True]], "regressed": [["no"]]}},
            "`truth.regressed[0] (a)` must be 1 booleans",
        ),
        (
            {"truth": {"healthy": [[1]], "regressed": [[True]]}},
            "`truth.healthy[0] (a)` must be 1 booleans",
        ),
        ({"rates": {}}, "`rates` is not a suite spec field"),
    ],
)
def test_bad_suite_specs_are_named(change, message):
    with pytest.raises(gatecal.SpecError) as info:
        gatecal.suite_from_spec(SPEC | change, source="my.json")
    assert str(info.value).startswith("my.json: ")
    assert message in str(info.value)


def test_golden_command_and_the_bridge_to_simulate(tmp_path):
    code, out, err = run_cli("golden")
    assert (code, err) == (0, "")
    assert out == (article_transcripts.golden_run())
    spec_path = tmp_path / "golden-suite.json"
    code, out, _ = run_cli("golden", "--build", "regressed", "--export-suite", str(spec_path))
    assert code == 0 and "== healthy build ==" not in out and "pass rate: 0.75" in out
    code, out, err = run_cli("simulate", "--suite", str(spec_path), "--format", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert (data["cases"], data["judge_checks"], data["code_checks"], data["failing"]) == (
        12,
        2,
        1,
        3,
    )
    code, out, _ = run_cli("golden", "--format", "json", "--build", "healthy")
    assert json.loads(out)["builds"]["healthy"]["pass_rate"] == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["golden", "--build", "staging"],
            "--build must be healthy, regressed or both (got 'staging')",
        ),
        (["golden", "--pass-rate", "1.5"], "--pass-rate must be a number in [0, 1] (got '1.5')"),
        (["golden", "--threshold", "1.5"], "--pass-rate must be a number in [0, 1] (got '1.5')"),
        (["golden", "--judge", "gpt"], "--judge must be rule-based or openai (got 'gpt')"),
        (["golden", "--format", "csv"], "--format must be table or json (got 'csv')"),
        (
            ["golden", "--dataset", "/nonexistent/golden.json"],
            "--dataset /nonexistent/golden.json: cannot read a JSON dataset",
        ),
        (
            ["simulate", "--suite", "/nonexistent/suite.json"],
            "--suite /nonexistent/suite.json: cannot read the suite spec",
        ),
        (
            ["simulate", "--suite", "x.json", "--failing", "2"],
            "--failing can't be combined with --suite (got '2')",
        ),
        (
            ["golden", "--export-suite", "/nonexistent/s.json"],
            "--export-suite must be in an existing directory",
        ),
    ],
)
def test_golden_and_suite_errors(args, message, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = run_cli(*args)
    assert code == 2 and out == ""
    assert err.startswith("gatecal: error: ") and err.count("\n") == 1
    assert message in err


def test_openai_judge_needs_a_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, _, err = run_cli("golden", "--judge", "openai")
    assert code == 2 and "--judge openai needs OPENAI_API_KEY" in err


@pytest.mark.parametrize("name", list(article_transcripts.TRANSCRIPTS))
def test_transcripts_regenerate_byte_for_byte(name, monkeypatch):

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    committed = ROOT / "reports" / name
    assert article_transcripts.TRANSCRIPTS[name]() == committed.read_text()


def test_noisy_judge_transcript_is_consistent_with_the_exact_engine():
    text = article_transcripts.noisy_judge()
    assert "consistent: every simulated count lies inside the 99% binomial interval" in text
    assert " !" not in text
