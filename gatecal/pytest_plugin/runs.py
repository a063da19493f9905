"""The plugin's runs writer: every verdict of the session as gatecal's long JSONL table
(``--gatecal-runs-out``), written once, atomically, on the xdist controller only.
Stdlib only: ``gatecal recommend PATH`` reads what it writes."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatecal.readers._verdict import LONG_COLUMNS  # stdlib only, as this module is

if TYPE_CHECKING:
    from gatecal.pytest_plugin.results import Result

__all__ = ["LONG_COLUMNS", "write_runs"]


def write_runs(results: Iterable[Result], session: str, path: Path) -> int:
    """Write the verdicts of `results` (repeat I of run `session` is ``session#I``) to `path`; the
    number of rows written."""
    rows = []
    ordered = sorted(results, key=lambda r: (r.repeat, r.case))
    for r in ordered:
        run = f"{session}#{r.repeat}" if r.repeat else session
        base: dict[str, Any] = dict.fromkeys(LONG_COLUMNS, "")
        base.update(run=run, case=r.case, session=session, attempts=r.attempts, cached="false")
        if r.verdicts is None:
            rows.append({**base, "status": "skipped"})
            continue
        for v in r.verdicts:
            passed = "" if v["passed"] is None else ("true" if v["passed"] else "false")
            score = "" if v.get("score") is None else v["score"]
            rows.append(
                {
                    **base,
                    "check": v["check"],
                    "kind": v["kind"],
                    "passed": passed,
                    "status": v["status"],
                    "score": score,
                }
            )
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    from gatecal._common.output import check_outputs, write_outputs  # stdlib only: still light

    # gatecal's output rules: a regular file replaced atomically, a symlink followed,
    # a device or FIFO written through, never a directory (OutputError names the option)
    (planned,) = check_outputs([("--gatecal-runs-out", path)])
    write_outputs([(planned, text.encode("utf-8"))])
    return len(rows)
