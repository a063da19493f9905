"""Measured repeated runs: long CSV/JSONL tables and JUnit XML (pytest, Maven Surefire)."""

from __future__ import annotations

import csv
import glob
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunsData", "RunsError", "Verdict", "read_runs"]

_TRUE = {"true", "1", "pass", "passed", "yes"}
_FALSE = {"false", "0", "fail", "failed", "no"}
_BUILDS = ("healthy", "regressed")
_PARAM = re.compile(r"\[(.+)\]$")


class RunsError(ValueError):
    """Input that is not what it claims: the message names the file, line or element."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """One reported verdict of one check (or one whole case) in one run."""

    build: str
    run: str
    case: str
    check: str  # "" when the table gives one verdict per case
    kind: str  # "judge", "code" or "" (unknown)
    passed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class RunsData:
    """Every verdict read, and what was skipped.

    Attributes
    ----------
    verdicts : tuple of Verdict
    skipped : int
        Skipped testcases (JUnit) or rows, excluded from everything.
    sources : tuple of str
        The files read.
    """

    verdicts: tuple[Verdict, ...]
    skipped: int
    sources: tuple[str, ...]

    def builds(self) -> list[str]:
        """Builds present, healthy first."""
        present = {v.build for v in self.verdicts}
        return [b for b in _BUILDS if b in present]

    def runs(self, build: str) -> list[str]:
        """Run ids of `build`, in order of first appearance."""
        return list(dict.fromkeys(v.run for v in self.verdicts if v.build == build))

    def cases(self) -> list[str]:
        """Case ids, in order of first appearance."""
        return list(dict.fromkeys(v.case for v in self.verdicts))

    def case_matrix(self, build: str) -> tuple[list[str], list[str], list[list[bool]]]:
        """(runs, cases, passed[run][case]): a case passes a run if all its verdicts pass."""
        runs, cases = self.runs(build), self.cases()
        row = {r: i for i, r in enumerate(runs)}
        col = {c: j for j, c in enumerate(cases)}
        matrix = [[True] * len(cases) for _ in runs]
        for v in self.verdicts:
            if v.build == build and not v.passed:
                matrix[row[v.run]][col[v.case]] = False
        return runs, cases, matrix

    def judge_verdicts(self, build: str) -> tuple[int, int]:
        """(failed, total) judge verdicts of `build`, where checks and kinds are given."""
        judged = [v for v in self.verdicts if v.build == build and v.kind == "judge"]
        return sum(not v.passed for v in judged), len(judged)


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p for p in path.iterdir() if p.suffix.lower() in (".xml", ".csv", ".jsonl")
            )
            if not found:
                raise RunsError(f"{path}: no .xml, .csv or .jsonl files in this directory")
            files += found
        elif path.exists():
            files.append(path)
        else:
            matches = sorted(glob.glob(str(raw)))
            if not matches:
                raise RunsError(f"{raw}: no such file, directory or match")
            files += [Path(m) for m in matches]
    return files


def _passed(value: object, where: str) -> bool:
    text = str(value).strip().lower() if not isinstance(value, bool) else str(value).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise RunsError(f"{where}: `passed` must be true/false, 1/0 or pass/fail (got {value!r})")


def _rows(path: Path) -> Iterable[tuple[str, dict[str, object]]]:
    if path.suffix.lower() == ".jsonl":
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise RunsError(f"{path}:{number}: not a JSON object ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise RunsError(f"{path}:{number}: not a JSON object (got {row!r})")
                yield f"{path}:{number}", row
        return
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"run", "case", "passed"} - set(reader.fieldnames or [])
        if missing:
            raise RunsError(
                f"{path}: a runs table needs columns run, case, passed (missing {sorted(missing)})"
            )
        for row in reader:
            yield f"{path}:{reader.line_num}", dict(row)


def _read_table(path: Path, build: str | None) -> Iterable[Verdict]:
    for where, row in _rows(path):
        for key in ("run", "case", "passed"):
            if row.get(key) in (None, ""):
                raise RunsError(f"{where}: missing `{key}`")
        kind = str(row.get("kind") or "").strip().lower()
        if kind not in ("", "judge", "code"):
            raise RunsError(f"{where}: `kind` must be judge or code (got {row.get('kind')!r})")
        row_build = str(row.get("build") or build or "healthy").strip().lower()
        if row_build not in _BUILDS:
            raise RunsError(
                f"{where}: `build` must be healthy or regressed (got {row.get('build')!r})"
            )
        yield Verdict(
            build=row_build,
            run=str(row["run"]).strip(),
            case=str(row["case"]).strip(),
            check=str(row.get("check") or "").strip(),
            kind=kind,
            passed=_passed(row["passed"], where),
        )


def _case_id(name: str, classname: str) -> str:
    match = _PARAM.search(name)
    base = match.group(1) if match else name  # test_golden[refund-annual] -> refund-annual
    return f"{classname}.{base}" if classname else base


def _read_junit(path: Path, build: str) -> tuple[list[Verdict], int]:
    from defusedxml import ElementTree  # hardened: no entity expansion, no external DTDs

    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as exc:
        raise RunsError(f"{path}: not well-formed XML ({exc})") from None
    except Exception as exc:  # defusedxml refuses entity bombs and external references
        raise RunsError(f"{path}: refused unsafe XML ({type(exc).__name__})") from None
    if root is None or root.tag not in ("testsuites", "testsuite"):
        tag = "none" if root is None else root.tag
        raise RunsError(f"{path}: not JUnit XML (root element <{tag}>)")
    run = path.stem.removeprefix("TEST-") if path.name.startswith("TEST-") else path.stem
    elements = list(root.iter("testcase"))
    for element in elements:
        if not element.get("name"):
            raise RunsError(f"{path}: a <testcase> has no name attribute")
    short = [_case_id(e.get("name", ""), "") for e in elements]
    verdicts: list[Verdict] = []
    skipped = 0
    for element, case in zip(elements, short, strict=True):
        if element.find("skipped") is not None:
            skipped += 1
            continue
        if short.count(case) > 1:  # the same test name in two classes: qualify it
            case = _case_id(element.get("name", ""), element.get("classname", ""))
        failed = element.find("failure") is not None or element.find("error") is not None
        verdicts.append(Verdict(build, run, case, "", "", not failed))
    if not verdicts and not skipped:
        raise RunsError(f"{path}: JUnit XML with no <testcase>")
    return verdicts, skipped


def read_runs(paths: Sequence[str | Path], regressed: Sequence[str | Path] = ()) -> RunsData:
    """Read measured runs from files, directories or glob patterns.

    ``.csv`` and ``.jsonl`` hold a long table: one row per verdict (or per case and
    run) with ``run``, ``case``, ``passed`` and optionally ``check``, ``kind``
    (judge/code) and ``build`` (healthy/regressed). ``.xml`` is JUnit XML as pytest
    ``--junitxml`` and Maven Surefire (``TEST-*.xml``) write it: one file per run,
    each testcase a case (a parametrised id in brackets is the case id), a failure or
    error a fail, a skipped testcase excluded and counted. Files in `regressed` are
    runs of the regressed build.

    Raises
    ------
    RunsError
        Naming the file, line or element: a missing column, an unknown `passed`
        value, a duplicate (run, case, check), runs with differing case sets, input
        that is not what its name claims, or no verdict at all.
    """
    verdicts: list[Verdict] = []
    skipped = 0
    sources: list[str] = []
    for build, group in (("healthy", paths), ("regressed", regressed)):
        for path in _expand(group):
            sources.append(str(path))
            if path.suffix.lower() == ".xml":
                found, n_skipped = _read_junit(path, build)
                verdicts += found
                skipped += n_skipped
            elif path.suffix.lower() in (".csv", ".jsonl"):
                verdicts += _read_table(path, None if build == "healthy" else build)
            else:
                raise RunsError(f"{path}: expected .csv, .jsonl or .xml (JUnit)")
    if not verdicts:
        raise RunsError(f"{', '.join(sources) or 'input'}: no verdicts to read")
    seen: dict[tuple[str, str, str, str], None] = {}
    for v in verdicts:
        key = (v.build, v.run, v.case, v.check)
        if key in seen:
            what = f"check {v.check!r} of " if v.check else ""
            raise RunsError(
                f"duplicate verdict: {what}case {v.case!r} in run {v.run!r} ({v.build})"
            )
        seen[key] = None
    data = RunsData(verdicts=tuple(verdicts), skipped=skipped, sources=tuple(sources))
    expected = set(data.cases())
    case_sets: dict[tuple[str, str], set[str]] = {}
    for v in verdicts:
        case_sets.setdefault((v.build, v.run), set()).add(v.case)
    for (build, run), have in case_sets.items():
        if have != expected:
            missing = sorted(expected - have)
            raise RunsError(
                f"run {run!r} ({build}) has a different case set: missing {missing[:5]}"
                + (" ..." if len(missing) > 5 else "")
            )
    return data
