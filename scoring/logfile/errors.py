"""What is wrong with a file: one line's error, the whole file's, and the
collector that keeps the first of them and counts them all."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def line_too_long(number: int, size: int, limit: int) -> LineError:
    """The error for a line of ``size`` bytes over the limit of ``limit``."""
    return LineError(
        number,
        None,
        f"the line is {_kilobytes(size)}, longer than the limit of {_kilobytes(limit)} a line "
        "(REVIEWAPP_MAX_ANSWER_KB)",
    )


def _kilobytes(size: int) -> str:
    return f"{size / 1024:,.0f} KB" if size >= 10 * 1024 else f"{size / 1024:,.1f} KB"


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    field: str | None
    message: str
    # What ``line`` counts: a line of a text file, or, for a file that has no
    # lines to speak of (an Inspect log), its "sample" or "row".
    unit: str = "line"

    def __str__(self) -> str:
        # A problem of the whole file (unit "file") has no number to give.
        where = "the file" if self.unit == "file" else f"{self.unit} {self.line}"
        where += f", field {self.field}" if self.field else ""
        return f"{where}: {self.message}"

    def as_dict(self) -> dict:
        found = {"line": self.line, "field": self.field, "message": self.message}
        if self.unit != "line":
            found["unit"] = self.unit
        return found


class LogFileError(Exception):
    """A file that cannot be used; ``errors`` lists every problem found."""

    def __init__(self, errors: list[LineError], *, total: int | None = None):
        self.errors = errors
        self.total = len(errors) if total is None else total
        super().__init__("\n".join(str(error) for error in errors))


class ErrorCollector:
    """Keeps the first ``limit`` errors and counts them all."""

    def __init__(self, limit: int):
        self.limit = limit
        self.errors: list[LineError] = []
        self.total = 0

    def add(self, errors: Iterable[LineError]) -> None:
        for error in errors:
            self.total += 1
            if len(self.errors) < self.limit:
                self.errors.append(error)

    def raise_if_any(self) -> None:
        if self.total:
            raise LogFileError(self.errors, total=self.total)
