"""Human labels of the judge: one row per judgement of a labelled item (``gatecal calibrate``).

Columns ``item``, ``human`` (the true verdict), ``judge`` (the judge's), optionally ``check``
and ``repeat``; CSV (comma, semicolon or tab) or JSONL, in any encoding gatecal reads.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path

from gatecal.readers.labels.columns import Label, LabelColumns, LabelsError, verdict

__all__ = ["read_labels"]


def _label_rows(path: Path) -> Iterable[tuple[str, Mapping[str, object]]]:
    from gatecal._common.text import TextError, read_text

    suffix = path.suffix.lower()
    try:
        text = read_text(path)
    except TextError as exc:
        raise LabelsError(str(exc)) from None
    with io.StringIO(text, newline="" if suffix == ".csv" else None) as handle:
        if suffix == ".jsonl":
            from gatecal.readers.table.rows import jsonl_rows  # one JSONL reader for every table

            yield from jsonl_rows(text, path, LabelsError)
            return
        if suffix != ".csv":
            raise LabelsError(f"{path}: a label table must be .csv or .jsonl")
        reader = csv.DictReader(handle)
        from gatecal.readers.table.cells import duplicate_columns

        twice = duplicate_columns(reader.fieldnames or [])
        if twice:
            raise LabelsError(f"{path}: {twice}")
        missing = sorted({"item", "human", "judge"} - set(reader.fieldnames or []))
        if missing:
            raise LabelsError(
                f"{path}: a label table needs columns item, human, judge (missing {missing})"
            )
        for row in reader:
            yield f"{path}:{reader.line_num}", row


def read_labels(path: str | Path) -> LabelColumns:
    """Read a label table (``.csv`` or ``.jsonl``, UTF-8 with or without a BOM).

    Columns: ``item``, ``human`` and ``judge`` (pass/fail, yes/no, true/false or 1/0,
    any case; the judge may also be ``unparseable``, ``error`` or ``unscored``), and
    optionally ``check`` and ``repeat``. Rows of one item without a ``repeat`` are
    repeated judgements of it.

    The labels come as :class:`LabelColumns`, a sequence of :class:`Label` (made on
    demand) that holds a few bytes per label: a table from 1 MiB on is read in blocks
    straight into its columns.

    Parameters
    ----------
    path : str or Path
        The ``.csv`` or ``.jsonl`` label table.

    Returns
    -------
    LabelColumns
        The labels, one :class:`Label` per row.

    Raises
    ------
    LabelsError
        Naming the file and line: a missing column or value, an unknown verdict, an item
        whose human label differs between rows, a repeated (check, item, repeat), or no
        rows at all.
    """
    from gatecal._common.files import INPUT_MAX_BYTES, InputFileError, check_regular
    from gatecal.readers import _progress

    file = Path(path)
    try:  # no device or FIFO, and within the limit, before any byte is read
        check_regular(file, INPUT_MAX_BYTES)
    except InputFileError as exc:
        raise LabelsError(str(exc)) from None
    except OSError:
        pass  # the reader says why, as it always did
    _progress.expect([file])
    if _big(file):
        from gatecal.readers.labels.blocks import read_label_blocks
        from gatecal.readers.table.blocks import SlowPath

        try:
            return read_label_blocks(file)
        except SlowPath:
            pass  # read row by row, as a small file is: it names the line of what is wrong
    labels = _read_rows(file)
    _progress.done(file)
    return LabelColumns.of(labels)


def _big(file: Path) -> bool:
    """Is `file` a table to read in blocks (csv or jsonl, from STREAM_MIN_BYTES on)?"""
    from gatecal.readers.table.blocks import STREAM_MIN_BYTES

    if file.suffix.lower() not in (".csv", ".jsonl"):
        return False
    try:
        if file.stat().st_size < STREAM_MIN_BYTES:
            return False
        with open(file, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False  # the row reader says why
    return not head.startswith((b"\xff\xfe", b"\xfe\xff")) and b"\0" not in head


def _read_rows(file: Path) -> list[Label]:
    """The row-by-row reader: every rule checked row by row, errors naming the line."""
    try:
        rows = list(_label_rows(file))
    except OSError as exc:
        raise LabelsError(f"{file}: cannot read the label table ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise LabelsError(f"{file}: not UTF-8 text") from None
    labels: list[Label] = []
    first: dict[tuple[str, str], tuple[bool, str]] = {}
    seen: set[tuple[str, str, str]] = set()
    counts: dict[tuple[str, str], int] = {}
    for where, row in rows:
        item = str(row.get("item") if row.get("item") is not None else "").strip()
        if not item:
            raise LabelsError(f"{where}: missing `item`")
        check = str(row.get("check") or "").strip()
        human = verdict(row.get("human", ""), "human", where)
        judge = verdict(row.get("judge", ""), "judge", where)
        assert human is not None  # only the judge may be unparseable
        key = (check, item)
        counts[key] = counts.get(key, 0) + 1
        raw_repeat = row.get("repeat")
        repeat = str(raw_repeat).strip() if raw_repeat not in (None, "") else f"#{counts[key]}"
        if (check, item, repeat) in seen:
            what = f"check {check!r}, " if check else ""
            raise LabelsError(f"{where}: {what}item {item!r}, repeat {repeat!r} appears twice")
        seen.add((check, item, repeat))
        if key in first and first[key][0] != human:
            was, line = first[key]
            raise LabelsError(
                f"{where}: item {item!r} is labelled {'pass' if human else 'fail'} here and "
                f"{'pass' if was else 'fail'} at {line}; one item has one true verdict"
            )
        first.setdefault(key, (human, where))
        labels.append(Label(item=item, check=check, repeat=repeat, human=human, judge=judge))
    if not labels:
        raise LabelsError(f"{file}: no labelled items")
    return labels
