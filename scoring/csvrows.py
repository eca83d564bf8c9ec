"""Reading a CSV file's rows after its header, every problem named by line.

Shared by the QA datasets (scoring.qa) and the imports (scoring.imports):
a row with more cells than the header is an error on its line; a shorter
row leaves its last columns out (missing, as a key left out of a JSON line
is); a blank row is skipped; a quoting error ends the reading there, as the
csv module cannot resynchronise.
"""

from __future__ import annotations

import csv
import re
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


# A CSV without a header row is read by position when the mapping names its
# columns so: col1 is the first.
POSITIONAL_COLUMN = re.compile(r"col[1-9][0-9]*")


def header_of(
    first: list[str], named: list[str], *, known=(), example: str
) -> tuple[list[str], bool, LineError | None]:
    """(the column names, whether ``first`` is a row of data, the error when
    it seems to be) for a CSV whose first line is ``first`` and which the
    mapping reads from the columns ``named``. A first line naming none of
    ``named`` is data when every name is positional (col1, col2, ...): the
    columns are then named so; and an error, whose fix shows ``example``,
    when it looks like data (looks_like_data) and names none of ``known``
    either."""
    header = [name.strip() for name in first]
    if named and not any(name in header for name in named):
        if all(POSITIONAL_COLUMN.fullmatch(name) for name in named):
            return [f"col{number}" for number in range(1, len(first) + 1)], True, None
        if looks_like_data(first) and not any(name in header for name in known):
            return header, False, no_header_problem(first, example)
    return header, False, None


def looks_like_data(cells: list[str]) -> bool:
    """Whether a first line's cells look like a row of values rather than
    column names: one of them is a number or a sentence (a question mark,
    or longer than 40 characters)."""
    for cell in (cell.strip() for cell in cells):
        if len(cell) > 40 or cell.endswith("?"):
            return True
        try:
            float(cell)
        except ValueError:
            continue
        return True
    return False


def no_header_problem(cells: list[str], example: str) -> LineError:
    """The error for a first line that holds data where a header belongs;
    ``example`` is a mapping by position that would read the file."""
    shown = ", ".join(repr(cell if len(cell) <= 30 else cell[:30] + "…") for cell in cells[:4])
    return LineError(
        1,
        None,
        f"this file seems to have no header row: its first line holds data ({shown}"
        f"{', ...' if len(cells) > 4 else ''}), not column names; add a header line naming the columns, "
        f"or map the columns by position, col1 being the first: {example}",
    )
