"""A store's runs over time: each case's record, and the cases whose rate changed.

Entry module: ``record.py`` (:func:`~gatecal._analyses.history.record.case_history`,
``gatecal history``); ``changes.py`` tests each case's failure rate between judges or time
windows (exact per-case tests under ``holm`` or ``bh``, the paired tests of
``_analyses/compare``). The runs come from ``gatecal/store`` through the readers' long table.

A new way to split the record (another selection than judges or windows) is one function
in ``changes.py`` returning its ``Shift``, and its option in ``cli/history.py``.
"""
