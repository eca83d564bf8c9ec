"""A question set as scoring reads it, held in columns.

Scoring a run against a set of a million questions needs, for each answer,
its question's expected behaviour and values and its slice fields. Held as a
dict of dicts (or of small objects) a million questions cost about 500 MB;
here each question is a number into arrays, and only the id to number index
is a Python dict: about 120 bytes a question. A question is made into a
ScoringQuestion (``table[question_id]``) when it is looked at.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from scoring.logfile import BEHAVIOURS, ErrorCollector, iter_questions


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
        number = self.numbers[question_id]
        start = self.value_ends[number - 1] if number else 0
        cluster, *slices = (
            known[column[number]] for column, known in zip(self.columns, self.column_values, strict=True)
        )
        return ScoringQuestion(
            question_id,
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

    def clusters(self) -> dict[str, str]:
        """Question id to cluster, for the questions that name one."""
        column, known = self.columns[0], self.column_values[0]
        return {self.ids[number]: known[code] for number, code in enumerate(column) if code}


def scoring_questions(path: Path, slice_fields: Sequence[str]) -> QuestionTable:
    """The question set of ``path`` as scoring reads it; raise LogFileError
    listing the bad lines."""
    collector = ErrorCollector(200)
    table = QuestionTable(slice_fields)
    for question in iter_questions(path, collector, normalised=False):
        table.add(question)
    collector.raise_if_any()
    return table
