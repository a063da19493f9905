"""What was read, shown before anyone trusts a number: ``gatecal runs``."""

from __future__ import annotations

import io
import json
from typing import Any

from gatecal._common.contracts import json_document
from gatecal._common.names import text_name
from gatecal._common.tables import code_fence, csv_cell, md_text, plural, write_csv
from gatecal._common.validate import ParameterError
from gatecal.readers._data import RunsData

__all__ = ["RUNS_FORMATS", "render_runs", "runs_summary"]

RUNS_FORMATS = ("table", "markdown", "json", "csv", "jsonl", "parquet")
GRID_MAX_RUNS = 60
GRID_MAX_CASES = 200


def runs_summary(data: RunsData) -> dict[str, Any]:
    """Counts, identities and the per-file mapping, as plain data (``--format json``)."""
    kinds, all_kinds = _kinds(data)
    names = data.short_names()
    builds: dict[str, Any] = {}
    for build in data.builds():
        runs, _, outcome = data.outcome_array(build)
        builds[build] = {
            "runs": len(runs),
            "sessions": len(data.sessions(build)),
            "passed": int((outcome == 1).sum()),
            "failed": int((outcome == 0).sum()),
            "missing": int((outcome == -1).sum()),
        }
    skipped_cases = {s.case for s in data.skips} - set(data.cases())
    read = dict(data.spellings)
    return {
        "runs": sum(b["runs"] for b in builds.values()),
        "cases": len(data.cases()),
        "checks": len(data.checks()),
        "verdicts": len(data.verdicts),
        "errors": data.errors,
        "unscored": data.unscored,
        "skipped": data.skipped,
        "reruns": data.reruns,
        "attempts": data.attempts_policy,
        "cached": data.cached,
        "components": len(data.components),
        "cost": data.cost,
        "tokens": data.tokens,
        "builds": builds,
        "run_list": [{"build": b, "run": r} for b in data.builds() for r in data.runs(b)],
        # an id read in another Unicode form than NFC (every id is compared in NFC) says how
        "case_list": [
            {"case": c, "short": names[c], **({"read_as": read[c]} if c in read else {})}
            for c in data.cases()
        ],
        "never_observed": sorted(skipped_cases),
        # a check of several kinds (promptfoo's `threshold`, judge where a model-graded
        # assertion is under it): `kind` is the first, `kinds` all
        "check_list": [
            {"check": c, "kind": kinds[c], "kinds": [k for k in all_kinds[c] if k]}
            for c in data.checks()
        ],
        "files": [f.to_dict() for f in data.files],
        "warnings": list(data.warnings),
    }


def _kinds(data: RunsData) -> tuple[dict[str, str], dict[str, dict[str, None]]]:
    """Each named check's first kind, and every (check, kind) pair, in order of appearance."""
    import numpy as np

    table = data.verdicts
    pairs = table.codes("check").astype(np.int64) * max(len(table.values("kind")), 1)
    pairs += table.codes("kind")
    seen, first = np.unique(pairs, return_index=True)
    kinds: dict[str, str] = {}
    all_kinds: dict[str, dict[str, None]] = {}
    n_kinds = max(len(table.values("kind")), 1)
    for pair in seen[np.argsort(first, kind="stable")].tolist():
        check, kind = table.values("check")[pair // n_kinds], table.values("kind")[pair % n_kinds]
        if check and check not in kinds:
            kinds[check] = kind
        all_kinds.setdefault(check, {})[kind] = None
    return kinds, all_kinds


def _grid(data: RunsData, build: str) -> list[str]:
    runs, cases, matrix = data.case_outcomes(build)
    names = data.short_names()
    symbol = {1: ".", 0: "x", -1: "-"}
    skipped = {(s.run, s.case) for s in data.skips if s.build == build}
    errored = {(v.run, v.case) for v in data.verdicts if v.build == build and v.status != "ok"}
    shown = {c: text_name(names[c]) for c in cases}
    width = min(max((len(shown[c]) for c in cases), default=4), 40)
    first, last = text_name(runs[0]), text_name(runs[-1])
    span = first if len(runs) == 1 else f"{first} ... {last}"
    lines = [
        f"{build} runs, one column each ({span}); "
        ". pass  x fail  E error/unscored  s skipped  - not reported"
    ]
    for j, case in enumerate(cases):
        cells = []
        for i, run in enumerate(runs):
            cell = symbol[matrix[i][j]]
            if cell == "-":
                cell = "E" if (run, case) in errored else ("s" if (run, case) in skipped else "-")
            cells.append(cell)
        lines.append(f"  {shown[case][:width]:<{width}}  {''.join(cells)}")
    return lines


def render_runs(data: RunsData, fmt: str = "table") -> str:
    """Render what was read as ``table``, ``markdown``, ``json``, ``csv`` or ``jsonl``."""
    if fmt == "json":
        return json_document("runs", runs_summary(data))
    if fmt == "jsonl":
        lines = []
        rows = (*data.verdicts, *data.components)
        for v in rows:
            lines.append(json.dumps(v.to_record()))
        for row in data.to_rows()[len(rows) :]:
            lines.append(json.dumps({**row, "passed": None, "score": None, "cached": False}))
        return "".join(line + "\n" for line in lines)
    if fmt == "csv":
        buffer = io.StringIO()
        # a case named "=HYPERLINK(...)" stays text in a spreadsheet; the reader strips the "'"
        cells = ({k: csv_cell(v) for k, v in row.items()} for row in data.to_rows())
        write_csv(buffer, list(data.columns()), cells)
        return buffer.getvalue()
    if fmt == "parquet":
        rule = "is bytes, not text: write it with gatecal.readers.table.parquet.write_parquet"
        raise ParameterError("fmt", rule, fmt)
    if fmt not in ("table", "markdown"):
        raise ParameterError("fmt", f"must be one of {RUNS_FORMATS}", fmt)
    s = runs_summary(data)
    fence = [_FENCE] if fmt == "markdown" else []
    lines = [f"read {plural(len(data.files), 'file')}:", *fence]
    paths = [text_name(f.path) for f in data.files]
    width = min(max((len(p) for p in paths), default=4), 60)
    for f, path in zip(data.files, paths, strict=True):
        what = f"{f.format} ({f.detail})" if f.detail else f.format
        lines.append(
            f"  {path:<{width}}  {what:<22} {f.build:<9} {plural(len(f.runs), 'run'):>8}  "
            f"{plural(f.verdicts, 'verdict'):>13}"
            + (f", {f.skipped} skipped" if f.skipped else "")
            + (f", {plural(f.errors, 'error')}" if f.errors else "")
        )
    notes = list(dict.fromkeys(n for f in data.files for n in f.notes))
    lines += [f"  how: {text_name(n)}" for n in notes[:8]]
    lines += [*fence, ""]
    for build, b in s["builds"].items():
        lines.append(
            f"{build}: {plural(b['runs'], 'run')} from {plural(b['sessions'], 'session')}; "
            f"case results {b['passed']} passed, {b['failed']} failed, {b['missing']} missing"
        )
    checks = ", ".join(
        f"{text_name(c['check'])} ({' or '.join(c['kinds']) or 'kind unknown'})"
        for c in s["check_list"]
    )
    lines.append(f"cases: {s['cases']}; checks: {checks or 'none named (one verdict per case)'}")
    lines.append(
        f"left out: {s['skipped']} skipped, {plural(s['errors'], 'error')}, "
        f"{s['unscored']} unscored (never passes, never failures)"
    )
    if data.spellings:
        first, spelled = data.spellings[0]
        lines.append(
            f"  {plural(len(data.spellings), 'case id')} read in another Unicode form than "
            f"NFC, compared and named in NFC (e.g. {spelled!a} as {first!a})"
        )
    if s["never_observed"]:
        shown = ", ".join(map(text_name, s["never_observed"][:5])) + (
            " ..." if len(s["never_observed"]) > 5 else ""
        )
        lines.append(f"  skipped in every run, so not a case: {shown}")
    lines.append(f"rerun attempts: {s['reruns']} (the {s['attempts']} attempt of each test counts)")
    if s["cached"]:
        lines.append(f"cached verdicts: {s['cached']}")
    if s["components"]:
        lines.append(
            f"underneath: {s['components']} assertion verdicts under test-level thresholds "
            "(the test's own pass rule decides; kept, not counted)"
        )
    if s["cost"] is not None or s["tokens"] is not None:
        cost = "" if s["cost"] is None else f"cost {s['cost']:.6g}"
        tokens = "" if s["tokens"] is None else f"{s['tokens']} tokens"
        lines.append(f"usage: {', '.join(t for t in (cost, tokens) if t)} (as the source reports)")
    lines += [f"warning: {text_name(w)}" for w in data.warnings]
    for build in data.builds():
        runs = data.runs(build)
        if 0 < len(runs) <= GRID_MAX_RUNS and len(data.cases()) <= GRID_MAX_CASES:
            lines += ["", *fence, *_grid(data, build), *fence]
    if fmt == "markdown":
        lines = _markdown_lines(lines)
    return "\n".join(lines) + "\n"


_FENCE = "\x00fence"  # where a code block opens or closes, until the fence is known


def _markdown_lines(lines: list[str]) -> list[str]:
    """Plain lines escaped (a case name or a warning is text, never markdown), and code
    blocks fenced with more backticks than any of their lines holds."""
    fence = code_fence("\n".join(line for line in lines if line != _FENCE))
    out, inside = [], False
    for line in lines:
        if line == _FENCE:
            out.append(fence + ("" if inside else "text"))
            inside = not inside
        else:
            out.append(line if inside else md_text(line))
    return out
