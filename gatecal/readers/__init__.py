"""Readers of measured runs: one module per source format, one normalised long table.

Every reader takes files and returns :class:`Verdict` rows (build, run, case, check,
kind, passed, status, score, session, attempts, cached; cost and tokens where the source
reports them) plus the skips, the checks underneath a case-level verdict (status
``component``) and how each file was read; :func:`read_runs` detects each file's format by
its content, calls the reader and checks the whole. Each format's reader follows the
``Reader`` protocol of ``_base`` (FORMAT, sniff, read); ``_registry`` lists them once,
and detection and ``--input-format`` are made from that list. Formats:

========== ==========================================================================
junit      JUnit XML: pytest ``--junitxml``, Maven Surefire/Failsafe, Gradle, promptfoo
csv, jsonl gatecal's long table (also what ``gatecal runs --format csv|jsonl`` writes)
parquet    the long table as Parquet (``gatecal runs --format parquet``; needs pyarrow)
promptfoo  ``promptfoo eval -o results.json``
inspect    inspect_ai logs, ``.json`` and ``.eval``
deepeval   DeepEval test-run JSON (``.deepeval/.latest_test_run.json``)
========== ==========================================================================

Entry module: ``_read.py`` (:func:`read_runs`). A new format is one module (a folder when
it needs several, as ``table/``, ``junit/`` and ``labels/``) with ``FORMAT``, ``sniff`` and
``read``, and its line in ``_registry``; nothing else changes. ``run_states.py`` reads each
run's per-case state (passed, failed, error, missing) under the evidence rule of
``_model/evidence.py``, for ``check`` and ``compare``.
"""
