"""Reading a CSV file's rows after its header, every problem named by line.

Shared by the QA datasets (scoring.qa) and the imports (scoring.imports):
a row with more cells than the header is an error on its line; a shorter
row leaves its last columns out (missing, as a key left out of a JSON line
is); a blank row is skipped; a quoting error ends the reading there, as the
csv module cannot resynchronise.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator

from scoring.logfile import ErrorCollector, LineError


def csv_rows(reader, header: list[str], collector: ErrorCollector) -> Iterator[tuple[int, dict]]:
    """(the row's first line, {column: cell}) for each row ``reader`` (a
    csv.reader past the header) gives; columns without a name are left out."""
    ended = reader.line_num
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            collector.add([LineError(ended + 1, None, f"not CSV ({csv_reason(error)})")])
            return
        started, ended = ended + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(header):
            extra = len(cells) - len(header)
            message = f"holds {len(cells)} cells, {extra} more than the {len(header)} columns of the header"
            collector.add([LineError(started, None, message)])
            continue
        yield started, {name: cell for name, cell in zip(header, cells, strict=False) if name}


def repeated_columns(header: list[str]) -> list[LineError]:
    """An error on line 1 for each column the header names more than once."""
    return [
        LineError(1, name, f"the column is named {header.count(name)} times in the header")
        for name in dict.fromkeys(header)
        if name and header.count(name) > 1
    ]


def csv_reason(error: csv.Error) -> str:
    text = str(error)
    if "field larger than field limit" in text:
        return f"a cell is longer than the {csv.field_size_limit():,} characters a cell may hold"
    return text


def listed_names(header: list[str]) -> str:
    """The header's column names, for an error saying which exist."""
    names = [name for name in header if name]
    shown = ", ".join(repr(name) for name in names[:20])
    more = f" and {len(names) - 20} more" if len(names) > 20 else ""
    return f"the header has {shown}{more}" if names else "the header names no column"
