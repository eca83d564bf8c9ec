"""CSV for spreadsheets: text that a spreadsheet would read as a formula is
neutralised, by OWASP's rule for CSV injection.

A cell of text that starts with =, +, -, @, a tab, a carriage return, a line
feed or a NUL gets a leading apostrophe, so Excel, LibreOffice and Google
Sheets show it as text instead of running it. Numbers stay numbers: only
strings are changed. (defusedcsv was weighed and not used: it leaves cells
that start with a tab or a carriage return as they are, and rewrites every
"|" inside a cell.)
"""

from __future__ import annotations

import csv
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\0")


def neutralise(value: Any) -> Any:
    """``value`` with an apostrophe in front when it is text a spreadsheet would run."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class _NeutralisingWriter:
    def __init__(self, stream, **options):
        self._writer = csv.writer(stream, **options)

    def writerow(self, row):
        return self._writer.writerow([neutralise(value) for value in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


def writer(stream, **options) -> _NeutralisingWriter:
    """A csv.writer over ``stream`` whose rows pass through neutralise() cell by cell."""
    return _NeutralisingWriter(stream, **options)
