"""Text renderings of the result objects: table, markdown, csv, json."""

__all__ = ["CHECK_FORMATS"]

#: What ``gatecal check --format`` writes (named here, light, for the command line's help).
CHECK_FORMATS = ("table", "markdown", "json", "junit")
