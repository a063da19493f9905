"""The documented defaults of the seed article's setting, in a module that imports nothing.

The command line declares its options' defaults from these, so ``import gatecal.cli``
does not import numpy (the analyses re-export them: ``gatecal.DEFAULT_SEED``).
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_FLIPS",
    "DEFAULT_GATES",
    "DEFAULT_RUNS",
    "DEFAULT_SEED",
    "RUNS_FOR_GATE_MAX",
    "SPREAD_SEED",
    "SPREAD_SUITES",
]

#: The seed article's setting: flip rates, gates and runs per build.
DEFAULT_FLIPS = (0.03, 0.08)
DEFAULT_GATES = "all,0.90,0.85,0.80"
DEFAULT_RUNS = 200
#: The documented default root seed, so the default output can be quoted and rerun.
DEFAULT_SEED = 20261130
#: The most known-good runs recommend's "more runs" and plan's --baseline-runs look for.
RUNS_FOR_GATE_MAX = 5000

#: Suites drawn from a case spread to say how much one suite varies around the average
#: (a share near 0.1 is known to within about 0.007): plan, simulate and policies.
SPREAD_SUITES = 2000
SPREAD_SEED = 20261206
