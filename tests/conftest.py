"""What every test folder shares: the hypothesis profiles and one way to run the command line.

CI explores a fixed set of hypothesis examples, so a run there is reproducible;
``HYPOTHESIS_PROFILE=thorough`` explores many more examples locally.
"""

import contextlib
import io
import os

from hypothesis import settings

from gatecal.cli import main

settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("thorough", max_examples=1500, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)


def run_cli(*args: object) -> tuple[int, str, str]:
    """``gatecal ARGS`` in this process: its exit code, standard output and standard error
    (each argument as text, so paths and numbers can be passed as they are)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()
