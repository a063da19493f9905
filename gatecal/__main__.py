"""``python -m gatecal``: the command line."""

import sys

from gatecal.cli import main

sys.exit(main())
