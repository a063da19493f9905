"""What known-good runs allow: the judge's noise measured per case and per run, and bounds.

The first floor of the analyses (every later concept reads it). Modules, bottom up:
``overdispersion.py`` (run-to-run correlation: the beta-binomial fit of failures per run),
``cases.py`` (each case's record, how much cases differ, the systematic cases), ``tails.py``
(a run's pass-count tails), ``bounds.py`` (the confidence set of (rate, icc) and each gate's
false-alarm bound: the entry module, :func:`~gatecal._analyses.noise.bounds.noise_bounds`)
and ``casegate.py`` (the case-aware gate: the run ranked among the known-good runs).

A new source of noise is its own module here with a frozen result, read by the gates that
need it; a new gate bound is a method of ``NoiseBounds``.
"""
