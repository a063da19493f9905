"""A gate recommended from measured repeated runs: the noise, its spread, the threshold.

Entry module: ``gate.py`` (:func:`~gatecal._analyses.recommend.gate.recommend_gate`,
``gatecal recommend``, and its ``Recommendation``). ``choice.py`` chooses among the gates
(always one: the shortfall and what would close it), ``runs.py`` holds the runs behind a
recommendation (the known-good outcomes, the regression measured or assumed, and how many
runs would certify a stricter gate), ``policy.py`` the per-case rule and suite gate at the
least cost (``gatecal recommend --policies``).

A new kind of recommended gate is its candidate in ``choice.py`` (with its bound from
``_analyses/noise``) and its row in the renderer (``_render/recommend.py``); a new policy
family is a rule of ``_analyses/policies``, searched by ``policy.py`` unchanged.
"""
