"""A run log's attempts: which line gave each attempt of each question, and
what only the whole file can tell (an attempt twice, a gap)."""

from __future__ import annotations

from collections.abc import Iterable

from scoring.logfile.errors import LineError
from scoring.logfile.fields import DEFAULT_REPETITIONS


class AttemptBook:
    """The line that gave each attempt of each question of a run log, and
    what only the whole file can tell: an attempt given twice, an id outside
    the question set (when ``question_ids`` are given) and a gap in a
    question's attempts.

    Attempts 1 are kept by question id alone, as many as a run has questions;
    later attempts, only in runs with repetitions, by (id, attempt)."""

    def __init__(self, *, repetitions: int = DEFAULT_REPETITIONS, question_ids: Iterable[str] | None = None):
        self.repetitions = repetitions
        self._checks_ids = question_ids is not None
        # 0 until the question's first attempt is seen.
        self._first: dict[str, int] = dict.fromkeys(question_ids or (), 0)
        self._later: dict[tuple[str, int], int] = {}

    def add(self, number: int, question_id: str, attempt: int) -> LineError | None:
        """Record that line ``number`` gives ``attempt`` of ``question_id``;
        the error, and nothing recorded, when it cannot."""
        line = self._first.get(question_id)
        if line is None and self._checks_ids:
            return LineError(number, "question_id", f"{question_id!r} is not in the question set")
        if attempt != 1:
            line = self._later.get((question_id, attempt))
        if line:
            if self.repetitions == 1:
                return LineError(number, "question_id", f"{question_id!r} already answered on line {line}")
            return LineError(
                number, "attempt", f"attempt {attempt} of {question_id!r} already given on line {line}"
            )
        if attempt == 1:
            self._first[question_id] = number
        else:
            self._later[(question_id, attempt)] = number
        return None

    def attempts(self, question_id: str) -> int:
        """How many attempts of ``question_id`` the file gives (after
        gap_errors found none, they are attempts 1 to this)."""
        later = sum((question_id, attempt) in self._later for attempt in range(2, self.repetitions + 1))
        return int(bool(self._first.get(question_id))) + later

    def gap_errors(self) -> list[LineError]:
        """One error for each question missing an attempt below one it has,
        on the line of the first attempt after the gap, naming the missing
        attempts and the lines of those given; in line order."""
        by_question: dict[str, dict[int, int]] = {}
        for (question_id, attempt), line in self._later.items():
            by_question.setdefault(question_id, {})[attempt] = line
        errors = []
        for question_id, given in by_question.items():
            if first := self._first.get(question_id):
                given[1] = first
            if len(given) == max(given):
                continue
            missing = [attempt for attempt in range(1, max(given)) if attempt not in given]
            after_gap = min(attempt for attempt in given if attempt > missing[0])
            lines = ", ".join(f"attempt {attempt} on line {given[attempt]}" for attempt in sorted(given))
            errors.append(
                LineError(
                    given[after_gap],
                    "attempt",
                    f"{question_id!r} has no attempt {_listed(missing)} ({lines}): "
                    "a question's attempts are numbered from 1 without gaps",
                )
            )
        return sorted(errors, key=lambda error: error.line)


def _listed(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return str(numbers[0])
    return ", ".join(map(str, numbers[:-1])) + f" or {numbers[-1]}"
