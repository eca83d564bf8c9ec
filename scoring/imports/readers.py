"""The entry points that dispatch to a format's reader: detect_format,
preview and convert. Each reader is imported only when its format is asked
for, so that Inspect AI (an optional extra) is imported only to read an
Inspect log."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from scoring.imports.common import FORMATS, Checked, ImportOptions, Preview
from scoring.logfile import LogFileError

# The versions the whole-file check converts under when none are given: a
# preview suggests the file's own or says it names none, and leaves them to
# be confirmed (the conversion asks for them then); what it checks is the file.
UNNAMED_VERSION = "preview"


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


class _Discarded(io.RawIOBase):
    """A binary stream that takes whatever is written and keeps nothing."""

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        return len(data)


def check(
    path: Path, file_format: str, options: ImportOptions, *, max_errors: int = 200, name: str = ""
) -> Checked:
    """Convert the whole of ``path`` into nothing, so that a preview makes
    the conversion's own checks: the first rows do not show what only the
    rest of the file holds (an id given twice on line 8, a metadata key
    sample 8 lacks), and a file the preview passes is not refused later."""
    options = replace(
        options,
        assistant_version=options.assistant_version or UNNAMED_VERSION,
        set_version=options.set_version or UNNAMED_VERSION,
    )
    try:
        return Checked(convert(path, _Discarded(), file_format, options, max_errors=max_errors, name=name))
    except LogFileError as error:
        return Checked(errors=list(error.errors), total=error.total)


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
