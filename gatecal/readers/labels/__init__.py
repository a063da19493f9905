"""Human labels beside the judge's verdicts (``item``, ``human``, ``judge``), for calibrate."""
