"""Evaluators that add what the built-in two lack: plain-code facts, grades, reasons."""

from __future__ import annotations

import re
from collections.abc import Sequence

from gatecal.evaluators._types import (
    EvaluationRequest,
    EvaluationResponse,
    Evaluator,
    Judge,
    ask,
)

__all__ = ["GRADED_PROMPT", "CompositeEvaluator", "ContainsFactsEvaluator", "GradedEvaluator"]


class ContainsFactsEvaluator:
    """Plain code, no model: does the answer contain every expected fact, as text?

    Case-insensitive substring match. The score is the share of facts found; the
    feedback lists the missing ones. A fluent wrong number cannot fool it.
    """

    name = "contains-facts"

    def __init__(self, facts: Sequence[str]) -> None:
        if isinstance(facts, str) or not facts or not all(isinstance(f, str) and f for f in facts):
            raise ValueError(
                f"`facts` must be a non-empty list of non-empty strings (got {facts!r})"
            )
        self.facts = tuple(facts)

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        text = request.answer.lower()
        missing = [f for f in self.facts if f.lower() not in text]
        score = 1.0 - len(missing) / len(self.facts)
        feedback = f"missing: [{', '.join(missing)}]" if missing else ""
        return EvaluationResponse(not missing, score, feedback, {"missing": missing})


GRADED_PROMPT = """\
Grade the response to the question from 1 (wrong or unsupported) to 5 (correct and
fully supported by the context). Reply with the grade.

Question:
{question}

Response:
{response}

Context:
{context}
"""

_GRADE = re.compile(r"(?<!\d)([1-5])(?!\d)")


class GradedEvaluator:
    """Asks the judge for a grade from 1 to 5; passes at or above `minimum_grade`.

    The grade is the first standalone digit 1-5 in the reply, so ``"4/5"`` and
    ``"Score: 4 - mostly right"`` read as 4. A reply without one (``"10"``,
    ``"excellent"``) fails with score 0 and the raw reply as feedback. The score is
    ``grade / 5``.
    """

    name = "graded"

    def __init__(self, judge: Judge, minimum_grade: int = 4) -> None:
        if isinstance(minimum_grade, bool) or minimum_grade not in range(1, 6):
            raise ValueError(
                f"`minimum_grade` must be an integer in [1, 5] (got {minimum_grade!r})"
            )
        self.judge = judge
        self.minimum_grade = minimum_grade

    def prompt(self, request: EvaluationRequest) -> str:
        """The text sent to the judge."""
        return (
            GRADED_PROMPT.replace("{question}", request.question)
            .replace("{response}", request.answer)
            .replace("{context}", request.supporting_data())
        )

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        reply = ask(self.judge, self.prompt(request))
        match = _GRADE.search(reply)
        if match is None:
            return EvaluationResponse(False, 0.0, f"judge did not return a grade: {reply}", {})
        grade = int(match.group(1))
        return EvaluationResponse(
            grade >= self.minimum_grade, grade / 5, f"grade {grade} of 5", {"grade": grade}
        )


class CompositeEvaluator:
    """Runs several evaluators on one request: all must pass.

    The score is the mean of theirs; the feedback names every failing evaluator with
    its own feedback; ``metadata["verdicts"]`` maps each evaluator's name to its
    verdict.
    """

    name = "composite"

    def __init__(self, evaluators: Sequence[Evaluator]) -> None:
        if not evaluators:
            raise ValueError("`evaluators` must hold at least one evaluator (got [])")
        self.evaluators = tuple(evaluators)

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        verdicts: dict[str, bool] = {}
        scores: list[float] = []
        failures: list[str] = []
        for evaluator in self.evaluators:
            name = str(getattr(evaluator, "name", type(evaluator).__name__))
            response = evaluator.evaluate(request)
            verdicts[name] = response.passed
            scores.append(response.score)
            if not response.passed:
                reason = f" ({response.feedback})" if response.feedback else ""
                failures.append(f"{name} failed{reason};")
        return EvaluationResponse(
            not failures, sum(scores) / len(scores), " ".join(failures), {"verdicts": verdicts}
        )
