import math
import re

import pytest

from gatecal import evaluators as ev

REQUEST = ev.EvaluationRequest(
    "How long do I have to request a refund on an annual plan?",
    (
        "Annual plans can be refunded within 30 days of purchase.",
        "Monthly plans are not refundable.",
    ),
    "You can request a refund on an annual plan within 30 days of purchase.",
)

# The prompt the article printed (01-evaluator-prompts.txt), tabs removed.
ARTICLE_RELEVANCY_PROMPT = """\
Your task is to evaluate if the response for the query
is in line with the context information provided.

You have two options to answer. Either YES or NO.

Answer YES, if the response for the query
is in line with context information otherwise NO.

Query:
How long do I have to request a refund on an annual plan?

Response:
You can request a refund on an annual plan within 30 days of purchase.

Context:
Annual plans can be refunded within 30 days of purchase.
Monthly plans are not refundable.

Answer:
"""

ARTICLE_FACT_PROMPT = """\
Evaluate whether or not the following claim is supported by the provided document.
Respond with "yes" if the claim is supported, or "no" if it is not.

Document:
Annual plans can be refunded within 30 days of purchase.
Monthly plans are not refundable.

Claim:
You can request a refund on an annual plan within 30 days of purchase.
"""


def test_request_constructors_and_supporting_data():
    assert ev.EvaluationRequest.from_question("q", "a") == ev.EvaluationRequest("q", (), "a")
    docs = ev.EvaluationRequest.from_documents(["d1", "d2"], "a")
    assert (docs.question, docs.documents, docs.answer) == ("", ("d1", "d2"), "a")
    assert REQUEST.supporting_data() == REQUEST.documents[0] + "\n" + REQUEST.documents[1]
    with pytest.raises(TypeError, match="`documents` must be a sequence of strings"):
        ev.EvaluationRequest("q", "one string", "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="`answer` must be a string"):
        ev.EvaluationRequest("q", (), None)  # type: ignore[arg-type]


def test_prompts_are_exactly_what_spring_ai_sends():
    judge = ev.RecordingJudge("yes")
    ev.RelevancyEvaluator(judge).evaluate(REQUEST)
    ev.FactCheckingEvaluator(judge).evaluate(REQUEST)
    ev.FactCheckingEvaluator.for_bespoke_minicheck(judge).evaluate(REQUEST)
    assert judge.prompts[0] == ARTICLE_RELEVANCY_PROMPT
    assert judge.prompts[1] == ARTICLE_FACT_PROMPT
    assert judge.prompts[2] == ARTICLE_FACT_PROMPT.split("\n", 3)[3]  # no instruction lines
    assert judge.calls == 3


def test_braces_in_answers_are_sent_verbatim():
    judge = ev.RecordingJudge("yes")
    request = ev.EvaluationRequest("{query}?", ("{context}",), "a {claim} {0}")
    ev.FactCheckingEvaluator(judge).evaluate(request)
    assert "Claim:\na {claim} {0}\n" in judge.prompts[0]


def test_spring_quirks_scores_and_feedback():
    yes, no = ev.RecordingJudge("yes"), ev.RecordingJudge("no")
    assert ev.RelevancyEvaluator(yes).evaluate(REQUEST) == ev.EvaluationResponse(True, 1.0, "", {})
    assert ev.RelevancyEvaluator(no).evaluate(REQUEST) == ev.EvaluationResponse(False, 0.0, "", {})
    # fact checking: score 0.0 even on a pass
    assert ev.FactCheckingEvaluator(yes).evaluate(REQUEST) == ev.EvaluationResponse(
        True, 0.0, "", {}
    )
    assert ev.FactCheckingEvaluator(no).evaluate(REQUEST).feedback == ""


# The article's 02-verdict-parsing.txt: reply -> (relevancy, fact-chk, wrapped)
VERDICT_TABLE = [
    ("yes", True, True, True),
    ("YES", True, True, True),
    ("  yes\n", True, True, True),
    ("Yes.", False, False, True),
    ("yes!", False, False, True),
    ("Yes, the response is in line with the context.", False, False, True),
    ("**Yes**", False, False, True),
    ("no", False, False, False),
    ("No.", False, False, False),
    ("", False, False, False),
]


@pytest.mark.parametrize(("reply", "relevancy", "fact", "wrapped"), VERDICT_TABLE)
def test_verdict_parsing_table(reply, relevancy, fact, wrapped):
    raw = ev.RecordingJudge(reply)
    assert ev.RelevancyEvaluator(raw).evaluate(REQUEST).passed is relevancy
    assert ev.FactCheckingEvaluator(raw).evaluate(REQUEST).passed is fact
    normalised = ev.VerdictNormalizingJudge(raw)
    assert ev.RelevancyEvaluator(normalised).evaluate(REQUEST).passed is wrapped
    assert ev.FactCheckingEvaluator(normalised).evaluate(REQUEST).passed is wrapped


@pytest.mark.parametrize(
    ("reply", "normalised"),
    [
        ("Yes.", "yes"),
        ("**No**, it is not", "no"),
        ("  YES!  ", "yes"),
        ("Yesterday it was", "Yesterday it was"),  # not a verdict: untouched, so it fails
        ("Maybe yes", "Maybe yes"),
        ("", ""),
    ],
)
def test_normalize_verdict(reply, normalised):
    assert ev.normalize_verdict(reply) == normalised


def test_contains_facts():
    request = ev.EvaluationRequest.from_question(
        "q", "Live chat runs Monday to Friday, 9:00 to 18:00 cet."
    )
    ok = ev.ContainsFactsEvaluator(["Monday to Friday", "9:00 to 18:00 CET"]).evaluate(request)
    assert (ok.passed, ok.score, ok.feedback) == (True, 1.0, "")
    half = ev.ContainsFactsEvaluator(["Monday to Friday", "24/7"]).evaluate(request)
    assert (half.passed, half.score, half.feedback) == (False, 0.5, "missing: [24/7]")
    for bad in ([], "30 days", [""], [3]):
        with pytest.raises(ValueError, match="`facts` must be a non-empty list"):
            ev.ContainsFactsEvaluator(bad)


# The article's 05-graded-and-composite.txt
@pytest.mark.parametrize(
    ("reply", "passed", "score", "feedback"),
    [
        ("5", True, 1.0, "grade 5 of 5"),
        ("4/5", True, 0.8, "grade 4 of 5"),
        ("Score: 4 - mostly right, misses the date", True, 0.8, "grade 4 of 5"),
        ("3", False, 0.6, "grade 3 of 5"),
        (
            "I would say excellent",
            False,
            0.0,
            "judge did not return a grade: I would say excellent",
        ),
        ("10", False, 0.0, "judge did not return a grade: 10"),
    ],
)
def test_graded_evaluator(reply, passed, score, feedback):
    r = ev.GradedEvaluator(ev.RecordingJudge(reply), minimum_grade=4).evaluate(REQUEST)
    assert (r.passed, r.feedback) == (passed, feedback)
    assert math.isclose(r.score, score)


def test_graded_minimum_is_checked():
    for bad in (0, 6, True, 4.5):
        with pytest.raises(ValueError, match="`minimum_grade` must be an integer in"):
            ev.GradedEvaluator(ev.RecordingJudge("5"), minimum_grade=bad)


def test_composite_names_failures_and_keeps_verdicts():
    request = ev.EvaluationRequest(
        "How much does an extra seat cost?",
        ("Extra seats cost 8 USD per seat per month on every paid plan.",),
        "Extra seats cost 12 USD per month.",
    )
    composite = ev.CompositeEvaluator(
        [ev.RelevancyEvaluator(ev.RuleBasedJudge()), ev.ContainsFactsEvaluator(["8 USD"])]
    )
    r = composite.evaluate(request)
    assert r.passed is False
    assert r.score == 0.5
    assert r.feedback == "contains-facts failed (missing: [8 USD]);"
    assert r.metadata["verdicts"] == {"relevancy": True, "contains-facts": False}
    with pytest.raises(ValueError, match="`evaluators` must hold at least one"):
        ev.CompositeEvaluator([])


def test_overlap_counts_content_words_and_numbers():
    evidence = "Extra seats cost 8 USD per seat per month on every paid plan."
    # extra, seats, cost, 12, usd, month: all but "12" appear -> 5/6
    assert ev.overlap("Extra seats cost 12 USD per month.", evidence) == pytest.approx(5 / 6)
    assert ev.overlap("", evidence) == 0.0
    assert ev.content_words("Monthly plans are NOT refundable") == {
        "monthly",
        "plans",
        "refundable",
    }


def test_rule_based_judge_reads_both_prompts_and_refuses_others():
    judge = ev.RuleBasedJudge()
    assert ev.RelevancyEvaluator(judge).evaluate(REQUEST).passed  # 5 of 8 words: 0.625
    off_topic = ev.EvaluationRequest(REQUEST.question, REQUEST.documents, "Our app runs on iPhone.")
    assert not ev.FactCheckingEvaluator(judge).evaluate(off_topic).passed
    assert judge.calls == 2
    strict = ev.RuleBasedJudge(minimum_overlap=0.7)
    assert not ev.RelevancyEvaluator(strict).evaluate(REQUEST).passed
    with pytest.raises(ValueError, match="RuleBasedJudge does not recognise this prompt"):
        judge("What is 2 + 2?")
    with pytest.raises(ValueError, match="`minimum_overlap` must lie in"):
        ev.RuleBasedJudge(1.5)


def test_flaky_judge_is_seeded_and_flips_at_its_rate():
    inner = ev.RecordingJudge("yes")
    a = ev.FlakyJudge(inner, 0.2, seed=1)
    b = ev.FlakyJudge(inner, 0.2, seed=1)
    replies_a = [a("p") for _ in range(20_000)]
    assert replies_a == [b("p") for _ in range(20_000)]
    flips = replies_a.count("no")
    assert flips == a.flips
    assert abs(flips - 4000) < 5 * math.sqrt(20_000 * 0.2 * 0.8)  # Binomial(20000, 0.2)
    assert ev.FlakyJudge(ev.RecordingJudge("no"), 1.0, seed=0)("p") == "yes"
    assert ev.FlakyJudge(ev.RecordingJudge("Maybe"), 1.0, seed=0)("p") == "yes"
    assert ev.FlakyJudge(ev.RecordingJudge("no"), 0.0, seed=0)("p") == "no"
    with pytest.raises(ValueError, match="`p` must lie in"):
        ev.FlakyJudge(inner, -0.1)


def test_a_broken_judge_is_an_error_never_a_pass():
    def raises(prompt):
        raise TimeoutError("judge timed out")

    def returns_none(prompt):
        return None

    for judge, message in [
        (raises, "the judge raised TimeoutError: judge timed out"),
        (returns_none, "the judge must reply with text (got None)"),
    ]:
        for evaluator in (
            ev.RelevancyEvaluator(judge),
            ev.FactCheckingEvaluator(judge),
            ev.GradedEvaluator(judge),
            ev.VerdictNormalizingJudge(judge),
        ):
            with pytest.raises(ev.JudgeError, match=re.escape(message)):
                if callable(evaluator) and not hasattr(evaluator, "evaluate"):
                    evaluator("prompt")
                else:
                    evaluator.evaluate(REQUEST)


def test_evaluators_package_imports_no_numpy():
    import subprocess
    import sys

    code = "import sys, gatecal.evaluators; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
