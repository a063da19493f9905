"""Policies on top of a gate: majority votes, confirm-on-fail, repeated cases, reruns of failing
cases or of the suite, sequential gates; each with exact false alarm, detection and cost.

Modules, bottom up: ``rules.py`` (the base types: ``Policy``, one attempt per case, its
results; no switch), ``exact.py`` (the entry module,
:func:`~gatecal._analyses.policies.exact.policy_rates`), ``nodes.py`` (big suites under
run-level correlation), ``simulate.py`` and ``counts.py`` (call by call, or by counts of alike
cases), ``sequential.py``, ``parse.py`` (the switch from text to a policy) and ``compare.py``
(exact beside simulated, one report).

A new policy is a field of ``Policy`` (its effect on one case's try in ``rules._case_try``, its
draw in ``simulate.py``) and a spelling in ``parse.py``.
"""
