"""Whether a set or a run can tell a careful assistant from one that answers
everything: spec 000's common mistake "No refusal cases. An assistant that
answers everything scores well." One wording, shown by the CLI, the set
version page, the run page and the API."""

from __future__ import annotations

NO_DECLINE_WARNING = (
    'No question of {what} expects a decline (expected_behaviour "decline"), so an assistant that '
    "answers everything scores well: refusal accuracy cannot tell it from a careful one that declines "
    "what the data cannot answer. Add decline questions: ones the retrieved series cannot answer, "
    "such as a district, a year or a breakdown they do not hold."
)


def decline_warnings(*, decline_questions: int, what: str) -> list[str]:
    """The warning (a one-item list) when ``decline_questions``, the number
    of questions of ``what`` (e.g. "set 1.2") expecting a decline, is 0;
    else an empty list."""
    return [NO_DECLINE_WARNING.format(what=what)] if decline_questions == 0 else []
