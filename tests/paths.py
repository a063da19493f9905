"""Where the tests find the project: its root, the committed fixtures and reports."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
REPORTS = ROOT / "reports"
