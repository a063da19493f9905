"""Reading text a user brings: UTF-8 with or without a BOM, or UTF-16 with its BOM.

Every input file of gatecal is read through here, so a file saved by Excel (a UTF-8 BOM) or as
"Unicode text" (UTF-16) just works, and anything else is one error naming the file and the
first byte that is not text, never a traceback. No numpy: the evaluators use it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["TextError", "decode_text", "joined", "read_text"]


class TextError(ValueError):
    """A file that is not text in an encoding gatecal reads; the message names the byte."""


def decode_text(raw: bytes, where: str | Path) -> str:
    """Decode `raw`: UTF-16 when it starts with a UTF-16 BOM, else UTF-8 (BOM allowed)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise TextError(f"{where}: not UTF-16 text (byte offset {exc.start})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1]
        raise TextError(
            f"{where}: not UTF-8 text (byte offset {exc.start}: {bad!r}); save it as UTF-8"
        ) from None


def read_text(path: str | Path, limit: int | None = None) -> str:
    """The text of a regular file of at most `limit` bytes (default
    :data:`gatecal._common.files.WHOLE_MAX_BYTES`; see :func:`decode_text`): TextError
    when it is not one; OSError passes through."""
    from gatecal._common.files import WHOLE_MAX_BYTES, InputFileError, read_limited

    try:
        raw = read_limited(path, WHOLE_MAX_BYTES if limit is None else limit)
    except InputFileError as exc:
        raise TextError(str(exc)) from None
    return decode_text(raw, path)


def joined(words: Sequence[str], last: str = "or") -> str:
    """Words for a sentence: ``a, b or c`` (a single word as it is)."""
    if len(words) == 1:
        return words[0]
    return f"{', '.join(words[:-1])} {last} {words[-1]}"
