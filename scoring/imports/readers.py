"""The entry points that dispatch to a format's reader: detect_format,
preview and convert. Each reader is imported only when its format is asked
for, so that Inspect AI (an optional extra) is imported only to read an
Inspect log."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from scoring.imports.common import FORMATS, ImportOptions, Preview


def detect_format(path: Path, name: str = "") -> str | None:
    """The format a file is in, from its name and first bytes; None when it
    is none of FORMATS (the app's own run log, say)."""
    import scoring.imports.sniff as sniff

    return sniff.detect_format(path, name or path.name)


def preview(
    path: Path, file_format: str, options: ImportOptions, *, rows: int = 5, name: str = ""
) -> Preview:
    """Read the first ``rows`` samples of ``path`` and show what they become.
    ``name`` is the file's own name when ``path`` stores it under another
    (an upload): lm-eval's names tell the task."""
    if file_format == "lm-eval":
        return _reader(file_format).preview(path, options, rows=rows, name=name)
    return _reader(file_format).preview(path, options, rows=rows)


def convert(
    path: Path,
    out: BinaryIO,
    file_format: str,
    options: ImportOptions,
    *,
    max_errors: int = 200,
    name: str = "",
) -> int:
    """Write ``path`` as a combined-form run log to ``out``; return the number
    of answer lines written. Raises LogFileError naming every bad sample or
    row (its number, the field, the reason), up to ``max_errors``; the caller
    then discards ``out``."""
    if file_format == "lm-eval":
        return _reader(file_format).convert(path, out, options, max_errors=max_errors, name=name)
    return _reader(file_format).convert(path, out, options, max_errors=max_errors)


def _reader(file_format: str):
    if file_format == "inspect":
        import scoring.imports.inspect_log as inspect_log

        return inspect_log
    if file_format == "lm-eval":
        import scoring.imports.lm_eval as lm_eval

        return lm_eval
    if file_format in ("ragas", "csv"):
        import scoring.imports.tabular as tabular

        return tabular.reader(file_format)
    raise ValueError(f"unknown import format {file_format!r}: the formats are {', '.join(FORMATS)}")
