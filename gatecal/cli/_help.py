"""The help screens in plain words: every command's summary whole, no Python types, a
glossary.

Click cuts each command's summary in ``gatecal --help`` to the width left beside the names
(about 45-65 characters, mid-sentence), and typer writes an argument's Python type beside
it (``RUNS... <list[str]>``) and brackets the usage (``{RUNS...}...``). Every gatecal
command uses :class:`HelpCommand`, which shows the summary whole (wrapped, never cut),
drops the types and writes the usage as ``RUNS...``.
"""

from __future__ import annotations

import re
from typing import Any

import typer

__all__ = ["GLOSSARY", "HelpCommand"]

#: The words gatecal's outputs use, in one line each (``gatecal --help`` ends with it).
GLOSSARY = """\b
Words:
  gate             the rule a CI run must meet: at least k of n cases pass,
                   or (case-aware) the failing cases, each weighed by how
                   rarely it failed in known-good runs, are no more surprising
                   than in a few of the known-good runs themselves
  false alarm      how often a gate fails a build that is fine
  detection        how often a gate fails a build with the regression
  regression       what to catch: a number (3) or a share (10%) of the cases
                   failing
  flip rate        how often the judge gets one verdict wrong
  case spread      how much cases differ: 0 when every case fails at one rate,
                   near 1 when each case's verdict is the same every run (a
                   judge at temperature 0); votes and reruns help less as it
                   grows
  run-to-run correlation
                   how much a whole run's judge mood varies (icc: 0 when runs
                   are alike, higher when some runs fail many cases at once)
  systematic case  a case failing in every known-good run: a judge error or a
                   broken test, not noise, and no sign of a regression
  known-good runs  repeated runs of a build you trust: they measure the
                   judge's noise
"""

_TYPE = re.compile(r"\s<[^<>]*>$")
_BRACED = re.compile(r"^[{\[](?P<name>[^}\]]*?)(?:\.\.\.)?[}\]](?P<more>\.\.\.)?$")


def _usage_piece(piece: str) -> str:
    """``{RUNS...}...`` -> ``RUNS...``; ``{FILE}`` -> ``FILE``; ``[RUNS]...`` -> ``[RUNS...]``."""
    match = _BRACED.match(piece)
    if match is None:
        return piece
    many = "..." if (match.group("more") or piece.rstrip("}]").endswith("...")) else ""
    name = match.group("name") + many
    return f"[{name}]" if piece.startswith("[") else name


class HelpCommand(typer.core.TyperCommand):
    """A typer command whose help speaks plainly (see the module)."""

    def get_short_help_str(self, limit: int = 45) -> str:
        text = self.short_help or (self.help or "").split("\n\n")[0]
        return " ".join(text.split())

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [_usage_piece(p) for p in super().collect_usage_pieces(ctx)]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        args, opts = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            name, text = record
            if param.param_type_name == "argument":
                args.append((_TYPE.sub("", name), text))
            elif param.param_type_name == "option":
                opts.append((_TYPE.sub("", name), text))
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        if opts:
            with formatter.section("Options"):
                formatter.write_dl(opts)
