"""What the measures and the repeats share: the measures in the order they are
shown, which of them count failures, the count columns of one answer (k and n
per measure) and one answer's checks (AnswerCheck).

Kept apart so that scoring.repeats, which tallies checks by question, and
scoring.measures, which makes the checks and scores a run with its repeats,
each import it and not each other. scoring.measures re-exports every name.
"""

from __future__ import annotations

# In the order they are shown.
MEASURES = (
    "numeric_accuracy",
    "citation_validity",
    "refusal_accuracy",
    "answer_rate",
    "unsupported_numbers",
    "unsupported_answers",
)

# For these, k counts failures (lower is better): unsupported numbers over
# numbers checked, and answers with an unsupported number over answers given.
FAILURE_MEASURES = frozenset({"unsupported_numbers", "unsupported_answers"})

COUNT_COLUMNS = tuple(f"{measure}_{part}" for measure in MEASURES for part in ("k", "n"))


class AnswerCheck:
    """The checks of one answer: counts per measure and the findings."""

    __slots__ = ("counts", "fields", "findings", "numbers", "question_id")

    def __init__(self, question_id, fields, counts, numbers, findings):
        self.question_id = question_id
        self.fields = fields  # the answer's value for each slice field
        self.counts = counts  # a list in COUNT_COLUMNS order
        self.numbers = numbers
        self.findings = findings

    def count(self, column: str) -> int:
        return self.counts[COUNT_COLUMNS.index(column)]
