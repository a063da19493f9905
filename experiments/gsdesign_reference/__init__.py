"""gsDesign as an independent reference for the exact sequential engine (README.md)."""
