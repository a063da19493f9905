"""How many cases (and known-good runs) a suite needs to meet a false-alarm and a detection target.

Modules, bottom up: ``_search.py`` (the pass-count pmfs a size gives, the result types
``SuitePlan``, ``SuiteSpread``, ``SuitePlans``), ``cases.py`` (suites whose cases spread:
averages over drawn suites and how far one suite may be from them), ``sequential.py``
(sequential gates' boundaries per size), ``baseline.py`` (known-good runs a gate needs) and
``suite.py``, the entry module (:func:`~gatecal._analyses.plan.suite.plan_suite`).

A new kind of noise gets its own search module here, called from ``plan_suite`` where the
noise says it applies; a new policy needs nothing here if ``policies`` computes one attempt.
"""
