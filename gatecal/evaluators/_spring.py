"""Spring AI's two built-in evaluators, modelled faithfully, quirks included.

The prompt texts below are reproduced from Spring AI (``RelevancyEvaluator`` and
``FactCheckingEvaluator`` in ``spring-ai-client-chat``), Copyright the original
authors, licensed under the Apache License, Version 2.0.
"""

from __future__ import annotations

from gatecal.evaluators._types import EvaluationRequest, EvaluationResponse, Judge, ask

__all__ = [
    "BESPOKE_FACT_CHECKING_PROMPT",
    "FACT_CHECKING_PROMPT",
    "RELEVANCY_PROMPT",
    "FactCheckingEvaluator",
    "RelevancyEvaluator",
    "reads_yes",
]

# From Spring AI's RelevancyEvaluator (Apache-2.0).
RELEVANCY_PROMPT = """\
Your task is to evaluate if the response for the query
is in line with the context information provided.

You have two options to answer. Either YES or NO.

Answer YES, if the response for the query
is in line with context information otherwise NO.

Query:
{query}

Response:
{response}

Context:
{context}

Answer:
"""

# From Spring AI's FactCheckingEvaluator (Apache-2.0).
FACT_CHECKING_PROMPT = """\
Evaluate whether or not the following claim is supported by the provided document.
Respond with "yes" if the claim is supported, or "no" if it is not.

Document:
{document}

Claim:
{claim}
"""

# From Spring AI's FactCheckingEvaluator.forBespokeMinicheck (Apache-2.0): for models
# fine-tuned for fact checking, which need no instruction.
BESPOKE_FACT_CHECKING_PROMPT = """\
Document:
{document}

Claim:
{claim}
"""


def _fill(template: str, **values: str) -> str:
    # str.replace, not str.format: answers and documents may hold braces.
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def reads_yes(reply: str) -> bool:
    """Spring AI's verdict reading: strip, then equal to "yes" ignoring case.

    Nothing else passes: ``"Yes."``, ``"yes!"`` and ``"Yes, it is."`` are failures.
    """
    return reply.strip().lower() == "yes"


class RelevancyEvaluator:
    """Spring AI's ``RelevancyEvaluator``: one judge call with query, response and context.

    Quirks, reproduced on purpose:

    * despite its name, the prompt asks whether the response "is in line with the
      context information": a groundedness check, much like fact checking;
    * the score is only ever 1.0 (pass) or 0.0 (fail);
    * the feedback is always empty, pass or fail.
    """

    name = "relevancy"

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    def prompt(self, request: EvaluationRequest) -> str:
        """The text sent to the judge."""
        return _fill(
            RELEVANCY_PROMPT,
            query=request.question,
            response=request.answer,
            context=request.supporting_data(),
        )

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        passed = reads_yes(ask(self.judge, self.prompt(request)))
        return EvaluationResponse(passed, 1.0 if passed else 0.0, "", {})


class FactCheckingEvaluator:
    """Spring AI's ``FactCheckingEvaluator``: is the claim (the answer) supported by the document?

    Quirks, reproduced on purpose:

    * the score is 0.0 even on a pass (Spring AI builds the response without one);
    * the feedback is always empty.

    :meth:`for_bespoke_minicheck` uses the shorter prompt for models fine-tuned for
    fact checking.
    """

    name = "fact-checking"

    def __init__(self, judge: Judge, prompt_template: str = FACT_CHECKING_PROMPT) -> None:
        self.judge = judge
        self.prompt_template = prompt_template

    @classmethod
    def for_bespoke_minicheck(cls, judge: Judge) -> FactCheckingEvaluator:
        """The variant with the bare document/claim prompt."""
        return cls(judge, BESPOKE_FACT_CHECKING_PROMPT)

    def prompt(self, request: EvaluationRequest) -> str:
        """The text sent to the judge."""
        return _fill(self.prompt_template, document=request.supporting_data(), claim=request.answer)

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        passed = reads_yes(ask(self.judge, self.prompt(request)))
        return EvaluationResponse(passed, 0.0, "", {})
