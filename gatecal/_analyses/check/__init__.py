"""The gate itself in CI: one run of a build decided against measured known-good runs.

Entry module: ``gate.py`` (:func:`~gatecal._analyses.check.gate.check_gate`, ``gatecal
check``); ``result.py`` holds what it returns (``GateCheck``, ``FailingCase``), ``runs.py``
how a policy (rerun-failing-R, rerun-R, repeat-K-of-N) combines several current runs into one
state per case, ``gatefile.py`` the refusal of a case-aware gate file measured on other
runs, and ``sequential.py`` the sequential gates (pass, fail, or run again). Every decision
rests on the one evidence rule of ``_model/evidence.py``; the per-run states come from
``readers/run_states.py``.

A new check policy is a rule of ``_analyses/policies`` (its parser lists it in
``CHECK_POLICIES``) and its branch in ``runs._combine``; a new sequential design is one of
``_analyses/sequential`` and is checked here without a change.
"""
