"""How LLM-judge evaluators prompt, parse and score, in idiomatic Python (no numpy).

A judge is any callable ``prompt -> reply``. The two Spring AI evaluators are
reproduced faithfully, quirks and all; the golden suite runs them over a small
dataset and exports its truth matrix for the gate engines.
"""

from gatecal.evaluators._checks import (
    GRADED_PROMPT,
    CompositeEvaluator,
    ContainsFactsEvaluator,
    GradedEvaluator,
)
from gatecal.evaluators._golden import (
    ASSISTANT_SYSTEM_PROMPT,
    GOLDEN_CHECKS,
    CaseResult,
    EvalReport,
    EvalRunner,
    GoldenCase,
    GoldenDataError,
    GoldenRunError,
    ScriptedModel,
    SupportAssistant,
    gate_outcome,
    load_golden,
    render_golden,
    run_golden,
    scripted_answers,
    suite_spec,
)
from gatecal.evaluators._judges import (
    FlakyJudge,
    OpenAIJudge,
    RecordingJudge,
    RuleBasedJudge,
    VerdictNormalizingJudge,
    content_words,
    normalize_verdict,
    overlap,
)
from gatecal.evaluators._spring import (
    BESPOKE_FACT_CHECKING_PROMPT,
    FACT_CHECKING_PROMPT,
    RELEVANCY_PROMPT,
    FactCheckingEvaluator,
    RelevancyEvaluator,
    reads_yes,
)
from gatecal.evaluators._types import (
    EvaluationRequest,
    EvaluationResponse,
    Evaluator,
    Judge,
    JudgeError,
)

__all__ = [
    "ASSISTANT_SYSTEM_PROMPT",
    "BESPOKE_FACT_CHECKING_PROMPT",
    "FACT_CHECKING_PROMPT",
    "GOLDEN_CHECKS",
    "GRADED_PROMPT",
    "RELEVANCY_PROMPT",
    "CaseResult",
    "CompositeEvaluator",
    "ContainsFactsEvaluator",
    "EvalReport",
    "EvalRunner",
    "EvaluationRequest",
    "EvaluationResponse",
    "Evaluator",
    "FactCheckingEvaluator",
    "FlakyJudge",
    "GoldenCase",
    "GoldenDataError",
    "GoldenRunError",
    "GradedEvaluator",
    "Judge",
    "JudgeError",
    "OpenAIJudge",
    "RecordingJudge",
    "RelevancyEvaluator",
    "RuleBasedJudge",
    "ScriptedModel",
    "SupportAssistant",
    "VerdictNormalizingJudge",
    "content_words",
    "gate_outcome",
    "load_golden",
    "normalize_verdict",
    "overlap",
    "reads_yes",
    "render_golden",
    "run_golden",
    "scripted_answers",
    "suite_spec",
]
