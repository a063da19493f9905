"""Repeated golden runs through a live judge, kept verdict by verdict, and written as runs."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatecal.evaluators._checks import ContainsFactsEvaluator
from gatecal.evaluators._golden import GoldenCase, ScriptedModel, SupportAssistant, load_golden
from gatecal.evaluators._judges import OpenAIJudge, VerdictNormalizingJudge, read_reply
from gatecal.evaluators._spring import FactCheckingEvaluator, RelevancyEvaluator
from gatecal.evaluators._types import EvaluationRequest, JudgeCall, JudgeError

__all__ = ["ORDERS", "JudgedVerdict", "repeat_golden", "runs_rows", "write_runs"]

ORDERS = ("case-major", "run-major")
_JUDGE_CHECKS: tuple[tuple[str, Callable[[Any], Any]], ...] = (
    ("relevancy", RelevancyEvaluator),
    ("fact-checking", FactCheckingEvaluator),
)


@dataclass(frozen=True, slots=True)
class JudgedVerdict:
    """One check of one golden case in one run, with the judge call behind it.

    Attributes
    ----------
    build, case, check, kind : str
        ``kind`` is ``judge`` (relevancy, fact checking) or ``code`` (contains-facts).
    run : int
        The run, from 0.
    strict : bool or None
        The evaluator's verdict as Spring AI reads the reply (only "yes" passes); None when
        the judge call failed.
    lenient : bool or None
        The same evaluator's verdict through :class:`VerdictNormalizingJudge` (first word).
    call : JudgeCall or None
        The judge call (None for a code check).
    """

    build: str
    run: int
    case: str
    check: str
    kind: str
    strict: bool | None
    lenient: bool | None
    call: JudgeCall | None = None

    def passed(self, reading: str) -> bool | None:
        """The verdict under ``strict`` or ``lenient`` reading (None: the call failed)."""
        if reading not in ("strict", "lenient"):
            raise ValueError(f"`reading` must be strict or lenient (got {reading!r})")
        return self.strict if reading == "strict" else self.lenient


def _replayed(reply: str) -> Callable[[str], str]:
    return lambda prompt: reply


def repeat_golden(
    judge: OpenAIJudge,
    runs: int,
    builds: Sequence[str] = ("healthy", "regressed"),
    *,
    cases: Sequence[GoldenCase] | None = None,
    order: str = "case-major",
    progress: Callable[[JudgedVerdict], None] | None = None,
) -> tuple[JudgedVerdict, ...]:
    """`runs` golden runs of each build, every judge check a real call of `judge`.

    Each judge check is one call, read both ways through the real evaluators: as sent
    (Spring AI's strict reading) and through :class:`VerdictNormalizingJudge` (lenient),
    the second replayed from the same reply, so the two readings are paired. A call that
    fails (after the judge's retries) is kept as an error verdict and the runs go on.

    ``case-major`` asks one prompt `runs` times before the next (a server's prompt cache
    then serves all but the first); ``run-major`` is the order CI runs take. With a seeded
    judge the two orders send the same seeds (:func:`call_seed`), so give both builds one
    judge: a prompt the builds share is then asked with fresh seeds in the second build.
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"`runs` must be a whole number >= 1 (got {runs!r})")
    if order not in ORDERS:
        raise ValueError(f"`order` must be one of {', '.join(ORDERS)} (got {order!r})")
    golden = load_golden() if cases is None else tuple(cases)
    out: list[JudgedVerdict] = []
    for build in builds:
        assistant = SupportAssistant(ScriptedModel.for_build(build, golden))
        requests = []
        for case in golden:  # the scripted answers are fixed: one per case and build
            answer = assistant.answer(case.question, case.documents)
            requests.append((case, EvaluationRequest(case.question, case.documents, answer)))
        if order == "case-major":
            slots = [(c, r, n, k) for c, r in requests for n, _ in _JUDGE_CHECKS
                     for k in range(runs)]  # fmt: skip
        else:
            slots = [(c, r, n, k) for k in range(runs) for c, r in requests
                     for n, _ in _JUDGE_CHECKS]  # fmt: skip
        judged: dict[tuple[str, str, int], JudgedVerdict] = {}
        for case, request, check, run in slots:
            verdict = _judge_once(judge, build, run, case, check, request)
            judged[(case.id, check, run)] = verdict
            if progress is not None:
                progress(verdict)
        for k in range(runs):
            for case, request in requests:
                out.extend(judged[(case.id, n, k)] for n, _ in _JUDGE_CHECKS)
                facts = ContainsFactsEvaluator(case.expected_facts).evaluate(request).passed
                out.append(JudgedVerdict(build, k, case.id, "contains-facts", "code", facts,
                                         facts))  # fmt: skip
    return tuple(out)


def _judge_once(
    judge: OpenAIJudge, build: str, run: int, case: GoldenCase, check: str,
    request: EvaluationRequest,
) -> JudgedVerdict:  # fmt: skip
    evaluator = dict(_JUDGE_CHECKS)[check]
    before = judge.calls
    try:
        strict = evaluator(judge).evaluate(request).passed
    except JudgeError:
        strict = None
    if judge.calls != before + 1:
        raise RuntimeError(f"expected one judge call for {check!r} of {case.id!r}")
    call = judge.last_call
    lenient = None
    if call.reply is not None:
        normalising = VerdictNormalizingJudge(_replayed(call.reply))
        lenient = evaluator(normalising).evaluate(request).passed
    return JudgedVerdict(build, run, case.id, check, "judge", strict, lenient, call)


def runs_rows(
    verdicts: Iterable[JudgedVerdict], reading: str = "strict", *, unparseable: str = "fail"
) -> list[dict[str, Any]]:
    """gatecal's long runs table (one JSON object per verdict) under one reading.

    ``passed`` is the evaluator's verdict; a reply the reading cannot parse fails, as the
    evaluators fail it (``unparseable="unscored"`` leaves it out instead: neither a pass
    nor a failure). A failed call is ``status: error``. Beside the columns gatecal reads,
    each judge row keeps the reply, what the reading made of it (``word``: yes, no or
    null), the seed, attempts, seconds, token usage, finish reason, the model that
    answered and any error.
    """
    if unparseable not in ("fail", "unscored"):
        raise ValueError(f"`unparseable` must be fail or unscored (got {unparseable!r})")
    rows: list[dict[str, Any]] = []
    for v in verdicts:
        passed = v.passed(reading)
        row: dict[str, Any] = {
            "build": v.build, "run": f"{v.build}-{v.run:03d}", "case": v.case,
            "check": v.check, "kind": v.kind, "passed": passed,
            "status": "ok" if passed is not None else "error",
        }  # fmt: skip
        call = v.call
        if call is not None:
            word = None if call.reply is None else read_reply(call.reply, reading)
            if word is None and call.reply is not None and unparseable == "unscored":
                row.update(passed=None, status="unscored")
            usage = call.usage
            row.update(
                reading=reading, reply=call.reply, word=word, seed=call.seed,
                repeat=call.repeat, attempts=call.attempts, seconds=round(call.seconds, 4),
                prompt_tokens=None if usage is None else usage.prompt_tokens,
                completion_tokens=None if usage is None else usage.completion_tokens,
                cached_tokens=None if usage is None else usage.cached_tokens,
                finish_reason=call.finish_reason, model=call.model, error=call.error,
            )  # fmt: skip
        rows.append(row)
    return rows


def write_runs(path: str | Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write rows as JSON Lines, atomically (a temporary file beside `path`, then renamed)."""
    target = Path(path)
    from gatecal._common.unicode import scrub  # a lone surrogate is written as U+FFFD

    text = scrub("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target
