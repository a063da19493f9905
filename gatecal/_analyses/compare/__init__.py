"""Did the candidate build get worse than the baseline build, on the same cases?

Modules, bottom up: ``paired.py`` (the exact tests: McNemar, Fisher per case, the permutation
of whole runs, sign flips, and the multiplicity rules), ``oc.py`` (the comparison's own false
alarm and detection, simulated from the baseline's measured noise), ``result.py`` (the
:class:`~gatecal._analyses.compare.result.Comparison` and the small results it nests, one per
group of its JSON) and ``builds.py``, the entry module
(:func:`~gatecal._analyses.compare.builds.compare_builds`).

A new global test is a function in ``paired.py`` returning a ``TestResult`` and one name in
``paired._global_test``; a new multiplicity rule is one function beside ``holm``.
"""
