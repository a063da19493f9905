"""Shared pieces every layer uses: validation, text files, atomic outputs."""
