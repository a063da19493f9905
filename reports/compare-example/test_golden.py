import os

import pytest

from gatecal import evaluators as ev

CASES = ev.load_golden()
JUDGE = ev.FlakyJudge(ev.RuleBasedJudge(), float(os.environ["FLIP"]), seed=int(os.environ["SEED"]))
RUNNER = ev.EvalRunner(
    ev.SupportAssistant(ev.ScriptedModel.for_build(os.environ["BUILD"], CASES)), JUDGE
)


@pytest.mark.gatecal
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden(case, gatecal_verdicts):
    result = RUNNER.run([case]).results[0]
    gatecal_verdicts.record("relevancy", result.relevant, kind="judge")
    gatecal_verdicts.record("fact-checking", result.grounded, kind="judge")
    gatecal_verdicts.record("contains-facts", result.has_facts, kind="code")
