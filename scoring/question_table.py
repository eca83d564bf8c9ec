"""A question set as scoring reads it, held in columns.

Scoring a run against a set of a million questions needs, for each answer,
its question's expected behaviour and values and its slice fields. Held as a
dict of dicts (or of small objects) a million questions cost about 500 MB;
here each question is a number into arrays, and only the id to number index
is a Python dict: about 120 bytes a question. A question is made into a
ScoringQuestion (``table[question_id]``) when it is looked at.
"""

from __future__ import annotations

import dataclasses
import gc
import io
import multiprocessing
import os
from array import array
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from scoring.logfile import BEHAVIOURS, ErrorCollector, LineError, iter_questions
from scoring.logfile.lines import iter_lines, range_bytes, records_in
from scoring.logfile.questions import header_follow_up, question_errors, repeated_id_error

# Bytes of a question set each process reads at a time, when several do.
PART_BYTES = 8 << 20


class ScoringQuestion:
    """A question as scoring reads it (by ``question["expected_behaviour"]``,
    ``question.get("expected_values")`` and its slice fields)."""

    __slots__ = (
        "cluster",
        "expected_behaviour",
        "expected_values",
        "question_id",
        "slice_index",
        "slice_values",
    )

    def __init__(self, question_id, expected_behaviour, expected_values, cluster, slice_index, slice_values):
        self.question_id = question_id
        self.expected_behaviour = expected_behaviour
        self.expected_values = expected_values
        self.cluster = cluster  # None: the question is its own cluster
        # Each slice field's position, one dict shared by every question.
        self.slice_index = slice_index
        self.slice_values = slice_values

    def get(self, name: str, default=None):
        if name in _OWN_FIELDS:
            return getattr(self, name)
        position = self.slice_index.get(name)
        value = None if position is None else self.slice_values[position]
        return default if value is None else value

    def __getitem__(self, name: str):
        value = self.get(name, _ABSENT)
        if value is _ABSENT:
            raise KeyError(name)
        return value


_OWN_FIELDS = frozenset({"expected_behaviour", "expected_values", "question_id", "cluster"})
_ABSENT = object()


class QuestionTable(Mapping):
    """Questions by id (a read-only Mapping of ScoringQuestion), in columns:
    each question's behaviour as a code, its expected values in one array
    with each question's end, and each slice field's and the cluster's value
    as a code into that field's distinct values."""

    def __init__(self, slice_fields: Sequence[str]):
        self.slice_index = {name: position for position, name in enumerate(slice_fields)}
        self.numbers: dict[str, int] = {}
        self.ids: list[str] = []
        self.behaviours = bytearray()
        self.values = array("d")
        self.value_ends = array("Q")
        # Column 0 is the cluster, then one per slice field; code 0 is None.
        self.columns = [array("I") for _ in range(1 + len(slice_fields))]
        self.column_values: list[list] = [[None] for _ in self.columns]
        self._column_codes: list[dict] = [{None: 0} for _ in self.columns]

    def add(self, question: Mapping) -> None:
        question_id = question["question_id"]
        self.numbers[question_id] = len(self.ids)
        self.ids.append(question_id)
        self.behaviours.append(BEHAVIOURS.index(question["expected_behaviour"]))
        self.values.extend(question["expected_values"])
        self.value_ends.append(len(self.values))
        fields = (question.get("cluster"), *(question.get(name) for name in self.slice_index))
        for column, codes, known, value in zip(
            self.columns, self._column_codes, self.column_values, fields, strict=True
        ):
            code = codes.get(value)
            if code is None:
                code = codes[value] = len(known)
                known.append(value)
            column.append(code)

    def __getitem__(self, question_id: str) -> ScoringQuestion:
        return self._question(self.numbers[question_id])

    def _question(self, number: int) -> ScoringQuestion:
        start = self.value_ends[number - 1] if number else 0
        cluster, *slices = (
            known[column[number]] for column, known in zip(self.columns, self.column_values, strict=True)
        )
        return ScoringQuestion(
            self.ids[number],
            BEHAVIOURS[self.behaviours[number]],
            tuple(self.values[start : self.value_ends[number]]),
            cluster,
            self.slice_index,
            tuple(slices),
        )

    def __contains__(self, question_id) -> bool:
        return question_id in self.numbers

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def row(self, number: int) -> dict:
        """The ``number``-th question as add() takes it."""
        question = self._question(number)
        return {
            "question_id": question.question_id,
            "expected_behaviour": question.expected_behaviour,
            "expected_values": question.expected_values,
            "cluster": question.cluster,
            **dict(zip(self.slice_index, question.slice_values, strict=True)),
        }

    def extend(self, other: QuestionTable) -> None:
        """Add ``other``'s questions (none of them here already) after these."""
        base, values_base = len(self.ids), len(self.values)
        self.numbers.update(zip(other.ids, range(base, base + len(other.ids)), strict=True))
        self.ids += other.ids
        self.behaviours += other.behaviours
        self.values += other.values
        self.value_ends.extend(end + values_base for end in other.value_ends)
        mine = zip(self.columns, self._column_codes, self.column_values, strict=True)
        for (column, codes, known), theirs, their_known in zip(
            mine, other.columns, other.column_values, strict=True
        ):
            mapping = []
            for value in their_known:
                code = codes.get(value)
                if code is None:
                    code = codes[value] = len(known)
                    known.append(value)
                mapping.append(code)
            column.extend(map(mapping.__getitem__, theirs))

    def clusters(self) -> dict[str, str]:
        """Question id to cluster, for the questions that name one."""
        column, known = self.columns[0], self.column_values[0]
        return {self.ids[number]: known[code] for number, code in enumerate(column) if code}


def scoring_questions(
    path: Path, slice_fields: Sequence[str], *, workers: int = 1, part_bytes: int = PART_BYTES
) -> QuestionTable:
    """The question set of ``path`` as scoring reads it; raise LogFileError
    listing the bad lines. With ``workers`` above 1 (0: every core), a set
    of more than one part is read in parts by that many processes, with the
    same questions and the same errors in the same order as one reads it:
    a million questions take one process 9.5 s, which every core scoring
    with --questions waits for."""
    path = Path(path)
    workers = workers or os.cpu_count() or 1
    size = path.stat().st_size
    if workers > 1 and size > part_bytes and _first_line_end(path) <= part_bytes:
        return _read_in_parts(path, slice_fields, workers, part_bytes)
    collector = ErrorCollector(200)
    table = QuestionTable(slice_fields)
    for question in iter_questions(path, collector, normalised=False):
        table.add(question)
    collector.raise_if_any()
    return table


def _first_line_end(path: Path) -> int:
    """Where the file's first non-blank line (its header, if any) ends: the
    first part must hold it, the only line that may be a header."""
    with open(path, "rb") as stream:
        for _, _, position, _ in iter_lines(stream):
            return position
    return 0


@dataclasses.dataclass
class _Part:
    """What one process read of its part: the part's physical lines, its
    first errors (lines numbered within the part) and how many it had, and
    its valid questions, with the line of each (repeated ids are looked for
    when the parts are put together)."""

    lines: int
    errors: list[LineError]
    error_total: int
    table: QuestionTable
    question_lines: array


# The path and slice fields, shared with forked readers.
_READ: dict = {}


def _read_part(job: tuple[int, int]) -> _Part:
    start, end = job
    with open(_READ["path"], "rb") as stream:
        data = range_bytes(stream, start, end)
    # Numbered from 2 past the first part: no byte-order mark is taken off
    # and no line is a header there, as when the file is read whole.
    first_number = 1 if start == 0 else 2
    collector = ErrorCollector(_READ["limit"])
    table = QuestionTable(_READ["slice_fields"])
    question_lines = array("I")
    for logged in records_in(io.BytesIO(data), collector, size=len(data), first_number=first_number):
        if errors := question_errors(logged.line, logged.record):
            collector.add(errors)
            continue
        table.add(logged.record)
        question_lines.append(logged.line - first_number + 1)
    table.numbers = {}  # rebuilt from the ids when the parts are joined
    lines = data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
    relative = [dataclasses.replace(e, line=e.line - first_number + 1) for e in collector.errors]
    return _Part(lines, relative, collector.total, table, question_lines)


def _read_in_parts(path: Path, slice_fields: Sequence[str], workers: int, part_bytes: int) -> QuestionTable:
    collector = ErrorCollector(200)
    header_follow_up(path, collector)
    size = path.stat().st_size
    jobs = [(start, min(start + part_bytes, size)) for start in range(0, size, part_bytes)]
    _READ.update(path=path, slice_fields=tuple(slice_fields), limit=collector.limit)
    table = QuestionTable(slice_fields)
    lines = array("I")
    offset = 0
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(min(workers, len(jobs)), initializer=gc.disable) as pool:
            for part in pool.imap(_read_part, jobs):
                _join(table, lines, part, offset, collector)
                offset += part.lines
    finally:
        _READ.clear()
    if not table and not collector.total:
        collector.add([LineError(1, None, "the file holds no questions")])
    collector.raise_if_any()
    return table


def _join(table: QuestionTable, lines: array, part: _Part, offset: int, collector: ErrorCollector) -> None:
    """Add a part's questions and errors, in line order, with the file's
    line numbers (``lines`` holds each question's, as ``table`` grows). A
    question id met before is an error on its line, as when the file is
    read whole, and that question is left out."""
    errors = [dataclasses.replace(error, line=offset + error.line) for error in part.errors]
    ids = part.table.ids
    if table.numbers.keys().isdisjoint(ids) and len(set(ids)) == len(ids):
        table.extend(part.table)
        lines.extend(offset + line for line in part.question_lines)
    else:
        for number, question_id in enumerate(ids):
            line = offset + part.question_lines[number]
            if question_id in table.numbers:
                errors.append(repeated_id_error(line, question_id, lines[table.numbers[question_id]]))
                continue
            table.add(part.table.row(number))
            lines.append(line)
        # A line with a question has no other error: sorting by line puts each where it was.
        errors.sort(key=lambda error: error.line)
    collector.add(errors)
    # The part's errors past those it kept come after all of them.
    collector.total += part.error_total - len(part.errors)
