"""Suite spec files (JSON or TOML): the cases, their checks and each build's truth."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatecal._model.suite import BUILDS, Check, Suite

__all__ = [
    "SPEC_FORMAT",
    "SpecError",
    "SuiteSpec",
    "load_spec",
    "load_suite",
    "spec_from_data",
    "suite_from_spec",
    "suite_to_spec",
]

SPEC_FORMAT = "gatecal-suite/1"


class SpecError(ValueError):
    """A malformed suite spec; the message names the file and the field."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteSpec:
    """A suite spec: the suite, and any judge error rates it gives for checks or cases.

    Attributes
    ----------
    suite : Suite
    per_check, per_case : dict of str to (fnr, fpr)
        From ``checks[i].fnr`` / ``.fpr`` and from ``case_rates``; pass them to
        :class:`JudgeNoise`. A check or case without its own rates uses the run's.
    """

    suite: Suite
    per_check: dict[str, tuple[float, float]]
    per_case: dict[str, tuple[float, float]]


def suite_to_spec(suite: Suite) -> dict[str, Any]:
    """The suite as spec data (what :func:`suite_from_spec` reads back).

    Parameters
    ----------
    suite : Suite
        The suite to write out.

    Returns
    -------
    dict
        ``format``, ``cases``, ``checks`` and ``truth``, ready for ``json.dumps``.
    """
    return {
        "format": SPEC_FORMAT,
        "cases": list(suite.cases),
        "checks": [{"name": c.name, "kind": c.kind} for c in suite.checks],
        "truth": {b: [list(row) for row in suite.truth[b]] for b in BUILDS},
    }


def suite_from_spec(data: Any, source: str = "suite spec") -> Suite:
    """Build a :class:`Suite` from spec data; see :func:`spec_from_data`.

    Parameters
    ----------
    data : mapping
        Parsed spec data (from JSON or TOML), as :func:`spec_from_data` reads it.
    source : str, default "suite spec"
        The name that error messages give the spec (e.g. its file).

    Returns
    -------
    Suite
        The cases, checks and truth matrices; per-check and per-case rates are dropped.

    Raises
    ------
    SpecError
        If a field is malformed; the message names it.
    """
    return spec_from_data(data, source).suite


def spec_from_data(data: Any, source: str = "suite spec") -> SuiteSpec:
    """Read spec data; every malformed field is a :class:`SpecError` naming it.

    The spec: ``format`` (optional, ``"gatecal-suite/1"``), ``cases`` (list of unique
    ids), ``checks`` (list of ``{"name", "kind"}`` with kind ``judge`` or ``code``,
    and optionally a judge check's own ``fnr`` and ``fpr``), ``truth`` with a
    ``healthy`` and a ``regressed`` matrix (one row per case, one boolean per check),
    and optionally ``case_rates``: ``{case id: {"fnr": x, "fpr": y}}`` for hard cases.

    Parameters
    ----------
    data : mapping
        Parsed spec data (from JSON or TOML).
    source : str, default "suite spec"
        The name that error messages give the spec (e.g. its file).

    Returns
    -------
    SuiteSpec
        The suite, plus any per-check and per-case (fnr, fpr) pairs.

    Raises
    ------
    SpecError
        If a field is missing, unknown or malformed; the message names it.
    """

    def fail(field: str, rule: str, value: Any) -> SpecError:
        return SpecError(f"{source}: `{field}` {rule} (got {value!r})")

    if not isinstance(data, Mapping):
        raise fail("(top level)", "must be an object", type(data).__name__)
    if data.get("format", SPEC_FORMAT) != SPEC_FORMAT:
        raise fail("format", f"must be {SPEC_FORMAT!r}", data.get("format"))
    unknown = sorted(set(data) - {"format", "cases", "checks", "truth", "case_rates"})
    if unknown:
        raise fail(unknown[0], "is not a suite spec field", data[unknown[0]])
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases or not all(isinstance(c, str) and c for c in cases):
        raise fail("cases", "must be a non-empty list of case ids", cases)
    if len(set(cases)) != len(cases):
        from collections import Counter

        raise fail("cases", "must be unique", next(c for c, n in Counter(cases).items() if n > 1))
    checks = data.get("checks")
    if not isinstance(checks, list) or not checks:
        raise fail("checks", "must be a non-empty list of {name, kind}", checks)
    parsed: list[Check] = []
    per_check: dict[str, tuple[float, float]] = {}
    for i, check in enumerate(checks):
        if not isinstance(check, Mapping) or not isinstance(check.get("name"), str):
            raise fail(f"checks[{i}]", "must be an object with a `name`", check)
        if check.get("kind") not in ("judge", "code"):
            raise fail(f"checks[{i}].kind", "must be 'judge' or 'code'", check.get("kind"))
        extra = sorted(set(check) - {"name", "kind", "fnr", "fpr"})
        if extra:
            raise fail(f"checks[{i}].{extra[0]}", "is not a check field", check[extra[0]])
        if "fnr" in check or "fpr" in check:
            if check["kind"] != "judge":
                raise fail(f"checks[{i}]", "only a judge check has error rates", check)
            per_check[check["name"]] = _rate_pair(check, f"checks[{i}]", fail)
        parsed.append(Check(check["name"], check["kind"]))
    if len({c.name for c in parsed}) != len(parsed):
        raise fail("checks", "must have unique names", [c.name for c in parsed])
    truth = data.get("truth")
    if not isinstance(truth, Mapping):
        raise fail("truth", "must be an object with 'healthy' and 'regressed' matrices", truth)
    matrices: dict[str, tuple[tuple[bool, ...], ...]] = {}
    for build in BUILDS:
        rows = truth.get(build)
        if not isinstance(rows, list) or len(rows) != len(cases):
            raise fail(f"truth.{build}", f"must be a list of {len(cases)} rows, one per case", rows)
        for i, row in enumerate(rows):
            ok = isinstance(row, list) and len(row) == len(parsed)
            if not ok or not all(isinstance(v, bool) for v in row):
                rule = f"must be {len(parsed)} booleans, one per check"
                raise fail(f"truth.{build}[{i}] ({cases[i]})", rule, row)
        matrices[build] = tuple(tuple(row) for row in rows)
    extra = sorted(set(truth) - set(BUILDS))
    if extra:
        raise fail(f"truth.{extra[0]}", "is not a build; use 'healthy' and 'regressed'", "...")
    case_rates = data.get("case_rates", {})
    if not isinstance(case_rates, Mapping):
        raise fail("case_rates", "must map case ids to {fnr, fpr}", case_rates)
    per_case: dict[str, tuple[float, float]] = {}
    for case, rates in case_rates.items():
        if case not in cases:
            raise fail(f"case_rates.{case}", "must name a case of `cases`", case)
        if not isinstance(rates, Mapping):
            raise fail(f"case_rates.{case}", "must be an object with fnr and fpr", rates)
        per_case[case] = _rate_pair(rates, f"case_rates.{case}", fail)
    suite = Suite(cases=tuple(cases), checks=tuple(parsed), truth=matrices)
    return SuiteSpec(suite=suite, per_check=per_check, per_case=per_case)


def _rate_pair(
    obj: Mapping[str, Any], where: str, fail: Callable[[str, str, Any], SpecError]
) -> tuple[float, float]:
    pair: list[float] = []
    for key in ("fnr", "fpr"):
        value = obj.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise fail(f"{where}.{key}", "must be a number in [0, 1]", value)
        pair.append(float(value))
    return pair[0], pair[1]


def load_suite(path: str | Path) -> Suite:
    """Read the suite of a ``.json`` or ``.toml`` suite spec (see :func:`load_spec`).

    Parameters
    ----------
    path : str or Path
        A ``.toml`` suite spec, or a JSON one (any other suffix).

    Returns
    -------
    Suite
        The cases, checks and truth matrices; per-check and per-case rates are dropped.

    Raises
    ------
    SpecError
        If the file cannot be read or parsed, or a field is malformed.
    """
    return load_spec(path).suite


def load_spec(path: str | Path) -> SuiteSpec:
    """Read a suite spec, with any per-check and per-case rates, from ``.json`` or ``.toml``.

    Parameters
    ----------
    path : str or Path
        A ``.toml`` suite spec, or a JSON one (any other suffix).

    Returns
    -------
    SuiteSpec
        The suite, plus any per-check and per-case (fnr, fpr) pairs.

    Raises
    ------
    SpecError
        If the file cannot be read or parsed, or a field is malformed.
    """
    file = Path(path)
    from gatecal._common.files import SPEC_MAX_BYTES
    from gatecal._common.text import TextError, read_text

    try:
        text = read_text(file, SPEC_MAX_BYTES)
    except OSError as exc:
        raise SpecError(f"{file}: cannot read the suite spec ({exc.strerror})") from None
    except TextError as exc:
        raise SpecError(str(exc)) from None
    try:
        data = tomllib.loads(text) if file.suffix.lower() == ".toml" else json.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "TOML" if file.suffix.lower() == ".toml" else "JSON"
        raise SpecError(f"{file}: not valid {kind} ({exc})") from None
    except RecursionError:
        raise SpecError(f"{file}: not a readable suite spec (nested too deeply)") from None
    return spec_from_data(data, source=str(file))
