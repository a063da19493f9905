"""``python -m gatecal``: the command line."""

import sys

from gatecal.cli import main

if __name__ == "__main__":  # worker processes import this module; they must not run it
    sys.exit(main())
