"""DeepEval test runs: ``test_run_*.json`` (``DEEPEVAL_RESULTS_FOLDER``) and
``.deepeval/.latest_test_run.json`` (the same object inside ``{"testRunData": ...}``).

Case
    The test case's ``name`` without the repeat suffix ``deepeval test run -r N``
    adds (``test_golden[capital-france-2-3]`` is repeat 2 of 3 of
    ``test_golden[capital-france]``); every repeat of one file is a run ``<file>#i``
    of one session (the file: one invocation). A case named with
    ``LLMTestCase(name=...)`` keeps that name in every repeat (DeepEval 4.3 and 3.9):
    when every name occurs the same number of times N > 1, the k-th occurrence in
    ``order`` is repeat k of N; names that occur unequally often are refused (two test
    cases given one name cannot be told from repeats).
Check
    Each metric in ``metricsData``; a metric with an ``evaluationModel`` is a judge
    check, the rest code checks. Passed is the metric's ``success`` (or
    ``score >= T`` with a ``--score-threshold`` for that metric).
Errors
    A metric with an ``error`` (``-i``), or with no score and ``success: false``
    (DeepEval's own count of errors without ``-i``), is an error: neither a pass nor a
    failure.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from gatecal.readers._base import (
    Batch,
    Head,
    ReaderBase,
    ReadOptions,
    as_float,
    load_json,
    split_repeats,
)
from gatecal.readers._verdict import RunsError, Verdict

__all__ = ["DeepEval", "read_deepeval"]


def read_deepeval(
    path: Path, raw: bytes, build: str, options: ReadOptions, label: str = ""
) -> Batch:
    """Read one DeepEval test-run file."""
    document = load_json(raw, path)
    if isinstance(document, dict) and isinstance(document.get("testRunData"), dict):
        document = document["testRunData"]
    cases = document.get("testCases") if isinstance(document, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise RunsError(f"{path}: a DeepEval test run needs a list `testCases`")
    names = []
    for index, case in enumerate(cases):
        if not isinstance(case.get("name"), str) or not case["name"]:
            raise RunsError(f"{path}: testCases[{index}] has no name")
        names.append(case["name"])
    session = label or path.stem.removeprefix(".")
    split = split_repeats(names, options.junit_repeats)
    how = "repeats (-r) in one session"
    if split is None:
        split = _named_repeats(cases, names, path)
        how = "repeats (-r) of named cases in one session, told apart by `order`"
    identity = split or [(name, 0) for name in names]
    batch = Batch()
    runs: dict[str, None] = {}
    errors = 0
    for index, (case, (base, repeat)) in enumerate(zip(cases, identity, strict=True)):
        run = f"{session}#{repeat}" if split else session
        runs[run] = None
        metrics = case.get("metricsData") or []
        if not isinstance(metrics, list):
            raise RunsError(f"{path}: testCases[{index}].metricsData must be a list")
        for metric in metrics:
            verdict = _verdict(metric, path, index, options)
            errors += verdict["status"] == "error"
            batch.verdicts.append(
                Verdict(
                    build=build, run=run, case=base, session=session, source=str(path), **verdict
                )
            )
    notes = [f"{max(r for _, r in split)} {how}"] if split else []
    batch.add_file(path, "deepeval", "test run", build, runs, errors=errors, notes=notes)
    return batch


def _named_repeats(
    cases: list[dict[str, Any]], names: list[str], path: Path
) -> list[tuple[str, int]] | None:
    """(name, repeat k) when the names repeat: ``name=`` cases under ``-r N``."""
    counts = Counter(names)
    if max(counts.values()) == 1:
        return None
    if len(set(counts.values())) > 1:
        shown = ", ".join(f"{n!r} {c}x" for n, c in counts.most_common(3))
        raise RunsError(
            f"{path}: test case names occur unequally often ({shown}, ...): repeats (-r) "
            "give every name the same count, so some names belong to different test cases; "
            "give each case its own name"
        )
    orders = [c.get("order") for c in cases]
    if all(isinstance(o, int) and not isinstance(o, bool) for o in orders):
        ranked = sorted(range(len(cases)), key=lambda i: (orders[i], i))
    else:
        ranked = list(range(len(cases)))
    seen: Counter[str] = Counter()
    out: list[tuple[str, int]] = [("", 0)] * len(cases)
    for i in ranked:
        seen[names[i]] += 1
        out[i] = (names[i], seen[names[i]])
    return out


def _verdict(metric: Any, path: Path, index: int, options: ReadOptions) -> dict[str, Any]:
    if not isinstance(metric, dict) or not isinstance(metric.get("name"), str):
        raise RunsError(f"{path}: testCases[{index}] has a metric without a name")
    name = metric["name"]
    score = as_float(metric.get("score"))
    kind = "judge" if metric.get("evaluationModel") else "code"
    errored = metric.get("error") is not None or (score is None and not metric.get("success"))
    if errored or (score is not None and score != score):
        status = "error" if errored else "unscored"
        return {"check": name, "kind": kind, "passed": None, "status": status, "score": None}
    if name in options.thresholds and score is not None:
        passed = score >= options.thresholds[name]
    elif isinstance(metric.get("success"), bool):
        passed = metric["success"]
    else:
        raise RunsError(
            f"{path}: testCases[{index}] metric {name!r} has no success flag "
            f"(got {metric.get('success')!r})"
        )
    return {"check": name, "kind": kind, "passed": passed, "status": "ok", "score": score}


class DeepEval(ReaderBase):
    """DeepEval test runs: an object with ``testCases`` (or ``testRunData.testCases``)."""

    FORMAT = "deepeval"
    SUFFIXES = (".json",)

    @staticmethod
    def sniff(head: Head) -> bool:
        if not head.text.startswith(("{", "[")):
            return False
        document = head.document
        if not isinstance(document, dict):
            return False
        inner = document.get("testRunData")
        return isinstance((inner if isinstance(inner, dict) else document).get("testCases"), list)

    read_file = staticmethod(read_deepeval)
