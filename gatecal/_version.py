"""The package's version: a leaf that imports nothing, read by the package face and by
every module that writes the version into an output (a JSON header, a store's record)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
