"""Hypothesis profiles: CI explores a fixed set of examples, so a run there is reproducible;
``HYPOTHESIS_PROFILE=thorough`` explores many more examples locally."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("thorough", max_examples=1500, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)
