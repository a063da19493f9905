"""The model: a suite of cases and checks, the judge noise, gates, suite specs."""
