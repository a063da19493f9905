"""The judge against human labels: its error rates, and the true pass rate behind a judged one.

Entry module: ``judge.py`` (:func:`~gatecal._analyses.calibrate.judge.calibrate_judge`,
``gatecal calibrate``): the confusion matrix per check, agreement and consistency over
repeats, and a suite spec of the measured rates; ``result.py`` holds what it returns
(``Calibration`` and its parts, each owning its JSON). ``correct.py`` turns an observed judged pass
rate into the true one (Rogan-Gladen), each interval method vectorised for the coverage study.

A new variant (an interval method for the corrected rate) is one function in ``correct.py``
and its name in ``CORRECTION_METHODS``; a new measure of the judge is a field of the
calibration result in ``result.py`` (and its ``to_dict``) and a line in its renderer
(``_render/calibrate.py``).
"""
