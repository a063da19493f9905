"""The golden suite: dataset, a scripted support assistant, the runner, the report and gate."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from gatecal._common.contracts import json_document
from gatecal.evaluators._checks import ContainsFactsEvaluator
from gatecal.evaluators._spring import FactCheckingEvaluator, RelevancyEvaluator
from gatecal.evaluators._types import EvaluationRequest, Judge, JudgeError

__all__ = [
    "ASSISTANT_SYSTEM_PROMPT",
    "GOLDEN_CHECKS",
    "CaseResult",
    "EvalReport",
    "EvalRunner",
    "GoldenCase",
    "GoldenDataError",
    "GoldenRunError",
    "ScriptedModel",
    "SupportAssistant",
    "gate_outcome",
    "load_golden",
    "render_golden",
    "run_golden",
    "scripted_answers",
    "suite_spec",
]

ASSISTANT_SYSTEM_PROMPT = (
    "Answer using only the context. If the context does not contain the answer, "
    "say you do not know."
)
#: The checks every golden case runs: (name, kind). Judge verdicts can be wrong.
GOLDEN_CHECKS = (("relevancy", "judge"), ("fact-checking", "judge"), ("contains-facts", "code"))
_FIELDS = {"id": str, "question": str, "context": list, "expectedFacts": list}


class GoldenDataError(ValueError):
    """A golden dataset that is malformed: the message names the file, the row and the field."""


class GoldenRunError(RuntimeError):
    """A golden run that could not judge a case (the app or the judge failed): names the case."""


@dataclass(frozen=True, slots=True)
class GoldenCase:
    """One row of the golden dataset."""

    id: str
    question: str
    documents: tuple[str, ...]
    expected_facts: tuple[str, ...]


def _data_file(name: str) -> str:
    return resources.files("gatecal.evaluators").joinpath("data", name).read_text("utf-8")


def load_golden(path: str | Path | None = None) -> tuple[GoldenCase, ...]:
    """Read a golden dataset (JSON list of rows with id, question, context, expectedFacts).

    Without `path`, the packaged 12-case support dataset. Every malformed row is an
    error naming the row; an empty dataset and duplicate ids are errors too.
    """
    name = "support-golden.json" if path is None else str(path)
    from gatecal._common.text import TextError, read_text

    try:
        text = _data_file(name) if path is None else read_text(path)
        rows = json.loads(text)
    except TextError as exc:
        raise GoldenDataError(str(exc)) from None
    except OSError as exc:
        raise GoldenDataError(f"{name}: cannot read a JSON dataset ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise GoldenDataError(f"{name}: cannot read a JSON dataset ({exc})") from None
    except RecursionError:
        raise GoldenDataError(f"{name}: cannot read a JSON dataset (nested too deeply)") from None
    if not isinstance(rows, list) or not rows:
        raise GoldenDataError(f"{name}: must be a non-empty JSON list of rows")
    cases: list[GoldenCase] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        where = f"{name}: row {number}"
        if not isinstance(row, dict):
            raise GoldenDataError(f"{where}: must be an object (got {row!r})")
        if isinstance(row.get("id"), str):
            where += f" ({row['id']!r})"
        for key, kind in _FIELDS.items():
            if key not in row:
                raise GoldenDataError(f"{where}: missing field {key!r}")
            value = row[key]
            if not isinstance(value, kind) or not value:
                raise GoldenDataError(f"{where}: field {key!r} must be a non-empty {kind.__name__}")
            if kind is list and not all(isinstance(v, str) and v for v in value):
                raise GoldenDataError(f"{where}: field {key!r} must hold non-empty strings")
        if row["id"] in seen:
            raise GoldenDataError(f"{where}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        cases.append(
            GoldenCase(
                row["id"], row["question"], tuple(row["context"]), tuple(row["expectedFacts"])
            )
        )
    return tuple(cases)


def scripted_answers(build: str) -> dict[str, str]:
    """The scripted answers of the ``healthy`` or ``regressed`` build, by case id.

    The regressed build is a bad prompt change: a hallucinated 60-day refund window,
    an off-topic SSO reply, and extra seats at 12 USD instead of 8.
    """
    answers = json.loads(_data_file("support-answers.json"))
    if build not in ("healthy", "regressed"):
        raise ValueError(f"`build` must be 'healthy' or 'regressed' (got {build!r})")
    return {**answers["healthy"], **(answers["regressed"] if build == "regressed" else {})}


_QUESTION = re.compile(r"\nQuestion: (.*)\Z", re.S)


class ScriptedModel:
    """The application's model, scripted: it answers each known question with a fixed text."""

    def __init__(self, answers_by_question: dict[str, str]) -> None:
        self.answers = dict(answers_by_question)
        self.calls = 0

    @classmethod
    def for_build(cls, build: str, cases: Sequence[GoldenCase]) -> ScriptedModel:
        """The scripted model of one build over the golden cases."""
        by_id = scripted_answers(build)
        return cls({c.question: by_id[c.id] for c in cases if c.id in by_id})

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        match = _QUESTION.search(prompt)
        if match is None or match.group(1) not in self.answers:
            raise ValueError(f"ScriptedModel has no answer for this prompt: {prompt!r}")
        return self.answers[match.group(1)]


class SupportAssistant:
    """The application under test: answers a question from the documents it is given."""

    system = ASSISTANT_SYSTEM_PROMPT

    def __init__(self, model: Callable[[str], str]) -> None:
        self.model = model
        self.calls = 0

    @staticmethod
    def prompt(question: str, documents: Sequence[str]) -> str:
        """The user message: the documents joined by line breaks, then the question."""
        return f"Context:\n{chr(10).join(documents)}\n\nQuestion: {question}"

    def answer(self, question: str, documents: Sequence[str]) -> str:
        self.calls += 1
        return self.model(self.prompt(question, documents))


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One golden case's answer and the verdict of each check."""

    id: str
    answer: str
    relevant: bool
    grounded: bool
    has_facts: bool

    @property
    def passed(self) -> bool:
        """A case passes only if every check passes."""
        return self.relevant and self.grounded and self.has_facts

    @property
    def verdicts(self) -> tuple[bool, bool, bool]:
        """The verdicts in the order of :data:`GOLDEN_CHECKS`."""
        return (self.relevant, self.grounded, self.has_facts)


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The results of one golden run."""

    results: tuple[CaseResult, ...]

    @property
    def pass_rate(self) -> float:
        """Share of cases that passed."""
        return sum(r.passed for r in self.results) / len(self.results)

    def failed_ids(self) -> list[str]:
        """Ids of the failing cases, in dataset order."""
        return [r.id for r in self.results if not r.passed]

    def require_pass_rate(self, threshold: float) -> None:
        """The gate: raise ``AssertionError`` naming the failing cases if the rate is too low."""
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValueError(f"`threshold` must be a number in [0, 1] (got {threshold!r})")
        if not 0.0 <= threshold <= 1.0:  # NaN fails this too
            raise ValueError(f"`threshold` must be a number in [0, 1] (got {threshold!r})")
        if self.pass_rate < threshold:
            raise AssertionError(
                f"pass rate {self.pass_rate:.2f} is below the {threshold:.2f} threshold; "
                f"failing cases: [{', '.join(self.failed_ids())}]"
            )

    def table(self) -> str:
        """The golden-run table of the article, then the pass rate and failing cases."""
        lines = [f"{'case':<19}{'relevant':<10}{'grounded':<10}{'has facts':<10}passed"]
        for r in self.results:
            cells = [r.relevant, r.grounded, r.has_facts, r.passed]
            lines.append(f"{r.id:<19}" + "".join(f"{str(c).lower():<10}" for c in cells).rstrip())
        lines.append(self.summary())
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        """``pass rate: 0.75   failing: [a, b, c]``."""
        return f"pass rate: {self.pass_rate:.2f}   failing: [{', '.join(self.failed_ids())}]"

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "pass_rate": self.pass_rate,
            "failing": self.failed_ids(),
            "cases": [
                {
                    "id": r.id,
                    "answer": r.answer,
                    "relevant": r.relevant,
                    "grounded": r.grounded,
                    "has_facts": r.has_facts,
                    "passed": r.passed,
                }
                for r in self.results
            ],
        }


class EvalRunner:
    """Runs every golden case: ask the assistant, then relevancy, fact checking, contains-facts."""

    def __init__(self, assistant: SupportAssistant, judge: Judge) -> None:
        self.assistant = assistant
        self.relevancy = RelevancyEvaluator(judge)
        self.fact_checking = FactCheckingEvaluator(judge)

    def run(self, cases: Sequence[GoldenCase]) -> EvalReport:
        """One golden run. A judge that fails is an error naming the case, never a pass."""
        return EvalReport(tuple(self._one(c) for c in cases))

    def _one(self, case: GoldenCase) -> CaseResult:
        answer = self.assistant.answer(case.question, case.documents)
        if not isinstance(answer, str):
            raise GoldenRunError(
                f"case {case.id!r}: the assistant must answer with text (got {answer!r})"
            )
        request = EvaluationRequest(case.question, case.documents, answer)
        try:
            relevant = self.relevancy.evaluate(request).passed
            grounded = self.fact_checking.evaluate(request).passed
        except JudgeError as exc:
            raise GoldenRunError(f"case {case.id!r}: {exc}") from exc
        has_facts = ContainsFactsEvaluator(case.expected_facts).evaluate(request).passed
        return CaseResult(case.id, answer, relevant, grounded, has_facts)


def run_golden(
    build: str,
    judge: Judge | None = None,
    cases: Sequence[GoldenCase] | None = None,
) -> EvalReport:
    """One golden run of a scripted build: the support assistant, then the three checks.

    `judge` defaults to a fresh :class:`RuleBasedJudge`; `cases` to :func:`load_golden`.
    """
    from gatecal.evaluators._judges import RuleBasedJudge

    golden = load_golden() if cases is None else tuple(cases)
    assistant = SupportAssistant(ScriptedModel.for_build(build, golden))
    return EvalRunner(assistant, RuleBasedJudge() if judge is None else judge).run(golden)


def gate_outcome(report: EvalReport, threshold: float) -> str:
    """What the gate says: ``require_pass_rate(0.90) returned normally`` or the error."""
    try:
        report.require_pass_rate(threshold)
    except AssertionError as exc:
        return f"AssertionError: {exc}"
    return f"require_pass_rate({threshold:.2f}) returned normally"


def render_golden(reports: Mapping[str, EvalReport], threshold: float, fmt: str = "table") -> str:
    """The article's golden-run transcript (``table``), or the same as ``json``.

    The table shows each build's cases and checks, then the gate on each build.
    """
    if fmt == "json":
        data = {
            "threshold": threshold,
            "builds": {
                b: {**r.to_dict(), "gate": gate_outcome(r, threshold)} for b, r in reports.items()
            },
        }
        return json_document("golden", data)
    if fmt != "table":
        raise ValueError(f"`fmt` must be 'table' or 'json' (got {fmt!r})")
    lines: list[str] = []
    for build, report in reports.items():
        lines += [f"== {build} build ==", report.table()]
    lines.append("== the gate ==")
    width = max(len(b) for b in reports) + len(" build")
    for build, report in reports.items():
        lines.append(f"{build + ' build':<{width}} : {gate_outcome(report, threshold)}")
    return "\n".join(lines) + "\n"


def suite_spec(healthy: EvalReport, regressed: EvalReport) -> dict[str, Any]:
    """The two runs' truth matrices as a suite spec that ``gatecal simulate --suite`` reads.

    Cases x checks (relevancy and fact checking are judge checks, contains-facts is
    a code check); each build's verdicts are taken as its truth.
    """
    ids = [r.id for r in healthy.results]
    if ids != [r.id for r in regressed.results]:
        raise ValueError("the healthy and regressed runs must cover the same cases in order")
    return {
        "format": "gatecal-suite/1",
        "cases": ids,
        "checks": [{"name": name, "kind": kind} for name, kind in GOLDEN_CHECKS],
        "truth": {
            "healthy": [list(r.verdicts) for r in healthy.results],
            "regressed": [list(r.verdicts) for r in regressed.results],
        },
    }
