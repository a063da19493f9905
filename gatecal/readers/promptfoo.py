"""promptfoo results: ``promptfoo eval -o results.json`` (results version 3 and 2) and
``-o results.jsonl`` (one result per line).

Target
    Each prompt x provider pair is a system under test. A file with several is read
    for one of them, named by ``target`` (a provider id or label, a prompt label or id,
    or ``"PROVIDER PROMPT"``); the error lists the choices.
Case
    The test's ``description``, else its ``vars`` (as canonical JSON). Repeats
    (``--repeat N``) are the same test again: the k-th occurrence of a case (in
    ``testIdx`` order) is run ``<file>#k``, all of one session (the file's eval).
Check
    Each assertion in ``gradingResult.componentResults``, named by its ``metric`` or its
    ``type`` (``#2``, ``#3`` for a type repeated within a test). Model-graded types
    (``llm-rubric``, ``g-eval``, ``factuality``, ``model-graded-*``, ``answer-relevance``,
    ``context-*``, ...) are judge checks, the rest code checks.
Test-level threshold
    A test with ``threshold:`` passes when the weighted mean of its assertion scores
    reaches it, whatever single assertions say: its verdict is promptfoo's own
    ``success`` (and ``score``), as the check ``threshold`` (kind ``judge`` when a
    model-graded assertion is among its assertions, else ``code``). The assertions stay
    in the long table underneath it, with status ``component``: shown, never counted.
Errors
    A result with ``failureReason`` 2 (or, in version 2, an ``error`` and no grading) is
    an error for each of the test's assertions: neither pass nor fail. promptfoo scores a
    judge it could not use as an ordinary failure and marks it ``metadata.graderError``:
    a reply it could not parse ("Could not extract JSON ...") is unscored here, a judge
    that failed (its provider's error) is an error. Releases before the marker (0.100)
    leave only the reason: a failed model-graded assertion whose reason is promptfoo's
    text for a failed provider call (``API error: 500 ...``, ``API call error: ...``,
    ``No output``) is an error, one whose reason is "Could not extract JSON from ..."
    unscored. A threshold test resting on such a judge is an error.
Usage
    The result's ``cost`` and ``tokenUsage.total`` go on its first verdict (``cost`` and
    ``tokens`` of the long table), so that a sum over the rows is the eval's total.
Cache
    ``response.cached`` marks a replayed response: a cached re-run measures nothing.
Other outputs
    ``-o results.xml``, ``-o results.csv`` and ``-o results.html`` are refused with a
    pointer to ``-o results.json``; for ``-o results.junit.xml`` see the JUnit reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gatecal.readers._base import (
    Batch,
    Head,
    ReaderBase,
    ReadOptions,
    as_float,
    decode,
    load_json,
)
from gatecal.readers._verdict import COMPONENT, RunsError, Verdict

__all__ = ["JUDGE_ASSERTIONS", "Promptfoo", "read_promptfoo"]

JUDGE_ASSERTIONS = frozenset(
    {
        "llm-rubric",
        "g-eval",
        "factuality",
        "model-graded-closedqa",
        "model-graded-factuality",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "select-best",
        "search-rubric",
        "pi",
        "trajectory:goal-success",
    }
)
_UNPARSED = ("could not extract json", "malformed response", "invalid json")
# what promptfoo writes as the reason of a model-graded assertion whose provider call
# failed (matchers: fail(resp.error || "No output"); the HTTP providers' error texts)
_CALL_FAILED = ("api error:", "api call error:", "no output")
_UNPARSED_OLD = "could not extract json from"
_ERROR = 2
THRESHOLD_CHECK = "threshold"


def _descriptions(document: Any) -> dict[str, str]:
    """Results v2: canonical vars -> the test's description, from ``results.table.body``."""
    table = document.get("results", {}).get("table") if isinstance(document, dict) else None
    out: dict[str, str] = {}
    for row in (table or {}).get("body") or [] if isinstance(table, dict) else []:
        test = row.get("test") if isinstance(row, dict) else None
        if isinstance(test, dict) and isinstance(test.get("description"), str):
            key = json.dumps(test.get("vars") or {}, sort_keys=True)
            out.setdefault(key, test["description"])
    return out


def _results(document: Any, path: Path) -> tuple[list[dict[str, Any]], str, str]:
    """(results, version text, eval id) from a results file or a JSONL list of results."""
    if isinstance(document, list):
        return document, "jsonl", ""
    if not isinstance(document, dict) or not isinstance(document.get("results"), dict):
        raise RunsError(f"{path}: not promptfoo results (no `results` object)")
    inner = document["results"]
    results = inner.get("results")
    if not isinstance(results, list):
        raise RunsError(f"{path}: promptfoo results without a `results.results` list")
    version = inner.get("version")
    return results, f"results v{version}", str(document.get("evalId") or "")


def _target(result: dict[str, Any]) -> tuple[str, str]:
    provider = result.get("provider")
    if isinstance(provider, dict):
        name = str(provider.get("label") or provider.get("id") or "")
    else:
        name = str(provider or "")
    prompt = result.get("prompt")
    label = ""
    if isinstance(prompt, dict):
        label = str(prompt.get("label") or prompt.get("id") or prompt.get("raw") or "")
    return name, label


def _matches(result: dict[str, Any], target: str) -> bool:
    provider = result.get("provider")
    names = {*_target(result), " ".join(_target(result))}
    if isinstance(provider, dict):
        names.add(str(provider.get("id") or ""))
    prompt = result.get("prompt")
    if isinstance(prompt, dict):
        names.add(str(prompt.get("id") or ""))
        names.add(f"{_target(result)[0]} {prompt.get('id')}")
    return target in names


def _case(result: dict[str, Any], described: dict[str, str] | None = None) -> str:
    test = result.get("testCase") if isinstance(result.get("testCase"), dict) else {}
    description = test.get("description") if test else None
    if description is None and described:  # results v2 keep descriptions in the table
        description = described.get(json.dumps(result.get("vars") or {}, sort_keys=True))
    if isinstance(description, str) and description.strip():
        return description.strip()
    variables = (test.get("vars") if test else None) or result.get("vars") or {}
    return json.dumps(variables, sort_keys=True, ensure_ascii=False)


def _check_names(assertions: list[Any]) -> list[str]:
    names: list[str] = []
    for assertion in assertions:
        a = assertion if isinstance(assertion, dict) else {}
        base = str(a.get("metric") or a.get("type") or "assertion")
        count = sum(n == base or n.startswith(f"{base}#") for n in names)
        names.append(base if count == 0 else f"{base}#{count + 1}")
    return names


def _kind(assertion: Any) -> str:
    kind = str(assertion.get("type") or "") if isinstance(assertion, dict) else ""
    return "judge" if kind.removeprefix("not-") in JUDGE_ASSERTIONS else "code"


def read_promptfoo(
    path: Path, raw: bytes, build: str, options: ReadOptions, label: str = ""
) -> Batch:
    """Read one promptfoo results file (JSON, or JSONL of results)."""
    text = decode(raw, path)
    document: Any = (
        load_json(raw, path)
        if text.lstrip().startswith("{") and "\n{" not in text.strip()
        else None
    )
    if document is None or (isinstance(document, dict) and "results" not in document):
        from gatecal.readers.table.rows import jsonl_rows

        document = [row for _, row in jsonl_rows(text, path)]
    results, version, eval_id = _results(document, path)
    described = _descriptions(document)
    results = [r for r in results if isinstance(r, dict)]
    targets = list(dict.fromkeys(_target(r) for r in results))
    if len(targets) > 1:
        if options.target is None:
            listed = "; ".join(f"{p} {q!r}" for p, q in targets)
            raise RunsError(
                f"{path}: {len(targets)} systems under test (provider prompt): {listed}; "
                "choose one with --target"
            )
        results = [r for r in results if _matches(r, options.target)]
        if not results:
            listed = "; ".join(f"{p} {q!r}" for p, q in targets)
            raise RunsError(f"{path}: no target {options.target!r} (have: {listed})")
    session = label or path.stem
    for i, result in enumerate(results):
        index = result.get("testIdx", i)
        if isinstance(index, bool) or not isinstance(index, int):
            raise RunsError(f"{path}: results[{i}].testIdx must be a whole number (got {index!r})")
    order = sorted(range(len(results)), key=lambda i: (results[i].get("testIdx", i), i))
    seen: dict[str, int] = {}
    batch = Batch()
    runs: dict[str, None] = {}
    errors = 0
    for index in order:
        result = results[index]
        case = _case(result, described)
        seen[case] = seen.get(case, 0) + 1
        run = f"{session}#{seen[case]}"
        runs[run] = None
        verdicts, components = _verdicts(result, path)
        for verdict in verdicts:
            errors += verdict["status"] == "error"
            batch.verdicts.append(
                Verdict(
                    build=build, run=run, case=case, session=session, source=str(path), **verdict
                )
            )
        for verdict in components:
            batch.components.append(
                Verdict(
                    build=build, run=run, case=case, session=session, source=str(path), **verdict
                )
            )
    if eval_id:
        batch.sessions[eval_id] = str(path)
    repeats = max(seen.values(), default=1)
    notes = [f"{repeats} repeats of each test in one session"] if repeats > 1 else []
    if len(targets) > 1:
        notes.append(f"target {options.target!r} of {len(targets)}")
    batch.add_file(path, "promptfoo", version, build, runs, errors=errors, notes=notes)
    return batch


def _usage(result: dict[str, Any]) -> dict[str, Any]:
    """The result's cost and total tokens, where promptfoo gives them."""
    usage = result.get("tokenUsage") if isinstance(result.get("tokenUsage"), dict) else {}
    total = (usage or {}).get("total")
    cost = as_float(result.get("cost"))
    tokens = total if isinstance(total, int) and not isinstance(total, bool) else None
    return {"cost": cost if cost is not None and cost == cost else None, "tokens": tokens}


def _verdicts(
    result: dict[str, Any], path: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(verdicts, components underneath a test-level threshold) of one result."""
    verdicts, components = _graded(result, path)
    usage = _usage(result)
    if verdicts and any(v is not None for v in usage.values()):
        verdicts[0] = {**verdicts[0], **usage}
    return verdicts, components


def _judge_trouble(kind: str, passed: Any, reason: str, meta: dict[str, Any]) -> str | None:
    """``error`` or ``unscored`` for a judge promptfoo could not use, else None."""
    if meta.get("graderError") is True:
        return "unscored" if any(p in reason for p in _UNPARSED) else "error"
    if kind == "judge" and passed is False and "graderError" not in meta:
        if reason.startswith(_CALL_FAILED):
            return "error"
        if reason.startswith(_UNPARSED_OLD):
            return "unscored"
    return None


def _graded(
    result: dict[str, Any], path: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    test = result.get("testCase") if isinstance(result.get("testCase"), dict) else {}
    declared = list(test.get("assert") or []) if test else []
    grading = result.get("gradingResult") if isinstance(result.get("gradingResult"), dict) else {}
    components = [c for c in (grading or {}).get("componentResults") or [] if isinstance(c, dict)]
    response = result.get("response") if isinstance(result.get("response"), dict) else {}
    cached = bool((response or {}).get("cached"))
    errored = result.get("failureReason") == _ERROR or (
        "failureReason" not in result and result.get("error") and not components
    )
    if errored or not components:
        assertions = [c.get("assertion") for c in components] or declared
        names = _check_names(assertions) if assertions else [""]
        if not errored:
            success = result.get("success")
            if not isinstance(success, bool):
                raise RunsError(f"{path}: a result without `success` ({_case(result)!r})")
            return [
                {
                    "check": "",
                    "kind": "",
                    "passed": success,
                    "status": "ok",
                    "score": as_float(result.get("score")),
                    "cached": cached,
                }
            ], []
        kinds = [_kind(a) for a in assertions] or [""]
        return [
            {
                "check": n,
                "kind": k,
                "passed": None,
                "status": "error",
                "score": None,
                "cached": cached,
            }
            for n, k in zip(names, kinds, strict=True)
        ], []
    names = _check_names([c.get("assertion") for c in components])
    out: list[dict[str, Any]] = []
    for name, component in zip(names, components, strict=True):
        kind = _kind(component.get("assertion"))
        passed = component.get("pass")
        reason = str(component.get("reason") or "").lower()
        meta = component.get("metadata") if isinstance(component.get("metadata"), dict) else {}
        trouble = _judge_trouble(kind, passed, reason, meta or {})
        if trouble is not None:
            # promptfoo scores a judge it could not read, or that failed, as a plain failure
            out.append(
                {
                    "check": name,
                    "kind": kind,
                    "passed": None,
                    "status": trouble,
                    "score": None,
                    "cached": cached,
                }
            )
            continue
        if not isinstance(passed, bool):
            raise RunsError(f"{path}: assertion {name!r} of {_case(result)!r} has no pass flag")
        out.append(
            {
                "check": name,
                "kind": kind,
                "passed": passed,
                "status": "ok",
                "score": as_float(component.get("score")),
                "cached": cached,
            }
        )
    threshold = as_float(test.get("threshold")) if test else None
    if threshold is None:
        return out, []
    # promptfoo decides the test by its weighted mean score against the threshold: its own
    # `success` is the verdict; the assertions are kept underneath it
    success = result.get("success")
    if not isinstance(success, bool):
        raise RunsError(f"{path}: a result without `success` ({_case(result)!r})")
    troubled = [v["status"] for v in out if v["status"] != "ok"]
    kind = "judge" if any(v["kind"] == "judge" for v in out) else "code"
    status = "error" if "error" in troubled else ("unscored" if troubled else "ok")
    decided = {
        "check": THRESHOLD_CHECK,
        "kind": kind,
        "passed": success if status == "ok" else None,
        "status": status,
        "score": as_float(result.get("score")) if status == "ok" else None,
        "cached": cached,
    }
    parts = [{**v, "status": COMPONENT} for v in out if v["status"] == "ok"]
    return [decided], parts


def _result_line(line: str) -> bool:
    """Is `line` one result of ``promptfoo eval -o results.jsonl``?"""
    try:
        item = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(item, dict) and "gradingResult" in item and "provider" in item


def _results_document(document: object) -> bool:
    if not isinstance(document, dict):
        return False
    results = document.get("results")
    if isinstance(results, dict) and "results" in results and "evalId" in document:
        return True
    return isinstance(results, dict) and isinstance(results.get("results"), list)


class Promptfoo(ReaderBase):
    """promptfoo results: a results JSON document, or JSONL of one result per line."""

    FORMAT = "promptfoo"
    SUFFIXES = (".json", ".jsonl")

    @staticmethod
    def sniff(head: Head) -> bool:
        if not head.text.startswith(("{", "[")):
            return False
        return _result_line(head.first_line) or _results_document(head.document)

    read_file = staticmethod(read_promptfoo)
