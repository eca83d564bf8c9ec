"""The automatic measures of spec 000, recipe 4.2, per answer and per slice.

Each answer is checked against its question (expected behaviour and values
come from the question set, never from the log). A check holds, for every
measure, k (successes) and n (how many things were judged), so that slices
are plain sums and runs scored in chunks add up exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from scoring.numbers import Number, extract_numbers, is_close_to_any

# In the order they are shown. For unsupported_numbers, k counts the
# unsupported numbers: a failure count, where lower is better.
MEASURES = (
    "numeric_accuracy",
    "citation_validity",
    "refusal_accuracy",
    "answer_rate",
    "unsupported_numbers",
)

MEASURE_LABELS = {
    "numeric_accuracy": "numeric accuracy",
    "citation_validity": "citation validity",
    "refusal_accuracy": "refusal accuracy",
    "answer_rate": "answer rate when expected",
    "unsupported_numbers": "unsupported numbers",
}

# Finding kinds, one per measure that can fail.
FINDING_KINDS = ("numeric", "unsupported", "refusal", "declined", "citation")

DEFAULT_SLICES = ("language",)

_COUNT_COLUMNS = [f"{measure}_{part}" for measure in MEASURES for part in ("k", "n")]


def format_value(value: float) -> str:
    """41.0 as "41", 7.6 as "7.6": values as a person would write them."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True, slots=True)
class Finding:
    question_id: str
    kind: str
    detail: str

    def as_dict(self) -> dict:
        return {"question_id": self.question_id, "kind": self.kind, "detail": self.detail}


@dataclass(slots=True)
class NumberCheck:
    """A number read from an answer, and what it was checked against."""

    number: Number
    counted: bool  # years are read but not counted as figures
    supported: bool | None  # None when not counted
    matched: float | None  # the retrieved or expected value it matched

    def as_dict(self) -> dict:
        return {
            "text": self.number.text,
            "value": self.number.value,
            "start": self.number.start,
            "end": self.number.end,
            "counted": self.counted,
            "supported": self.supported,
            "matched": self.matched,
        }


@dataclass(slots=True)
class AnswerCheck:
    """The checks of one answer: counts per measure and the findings."""

    question_id: str
    fields: dict[str, object]  # the values this answer is sliced by
    counts: dict[str, int]
    numbers: list[NumberCheck] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _first_match(value: float, candidates: Sequence[float]) -> float | None:
    for candidate in candidates:
        if is_close_to_any(value, (candidate,)):
            return candidate
    return None


def check_answer(
    answer: Mapping, question: Mapping, *, slice_fields: Sequence[str] = DEFAULT_SLICES
) -> AnswerCheck:
    """Check one logged answer against its question.

    ``answer`` has the fields of recipe 4.1; ``question`` has
    ``expected_behaviour`` ("answer" or "decline") and ``expected_values``.
    """
    question_id = answer["question_id"]
    expected_values = [float(v) for v in question.get("expected_values") or ()]
    retrieved_values = [float(v) for v in answer.get("retrieved_values") or ()]
    expects_answer = question["expected_behaviour"] == "answer"
    declined = bool(answer["declined"])
    text = answer.get("answer") or ""
    counts = dict.fromkeys(_COUNT_COLUMNS, 0)
    findings: list[Finding] = []

    numbers = extract_numbers(text)

    if expects_answer:
        hit = not declined and any(is_close_to_any(n.value, expected_values) for n in numbers)
        counts["numeric_accuracy_n"] = 1
        counts["numeric_accuracy_k"] = int(hit)
        counts["answer_rate_n"] = 1
        counts["answer_rate_k"] = int(not declined)
        if not hit:
            expected = ", ".join(format_value(v) for v in expected_values) or "no value"
            if declined:
                gave = "the answer declined"
            elif numbers:
                gave = "the answer gave " + ", ".join(n.text for n in numbers)
            else:
                gave = "the answer gave no number"
            findings.append(Finding(question_id, "numeric", f"expected {expected}; {gave}"))
        if declined:
            findings.append(Finding(question_id, "declined", "should have answered, but declined"))
    else:
        counts["refusal_accuracy_n"] = 1
        counts["refusal_accuracy_k"] = int(declined)
        if not declined:
            findings.append(
                Finding(question_id, "refusal", f"should have declined, but answered: {text!r}")
            )

    # Each cited identifier counts once, however often it is cited.
    retrieved_ids = set(answer.get("retrieved_ids") or ())
    for cited in dict.fromkeys(answer.get("cited_ids") or ()):
        counts["citation_validity_n"] += 1
        if cited in retrieved_ids:
            counts["citation_validity_k"] += 1
        else:
            findings.append(
                Finding(question_id, "citation", f"cited {cited}, which was not retrieved")
            )

    # Each distinct number counts once; a repeated figure is one claim.
    number_checks: list[NumberCheck] = []
    seen: set[float] = set()
    for number in numbers:
        if number.is_year:
            number_checks.append(NumberCheck(number, counted=False, supported=None, matched=None))
            continue
        matched = _first_match(number.value, retrieved_values)
        if matched is None:
            matched = _first_match(number.value, expected_values)
        supported = matched is not None
        repeated = number.value in seen
        seen.add(number.value)
        number_checks.append(
            NumberCheck(number, counted=not repeated, supported=supported, matched=matched)
        )
        if repeated:
            continue
        counts["unsupported_numbers_n"] += 1
        if not supported:
            counts["unsupported_numbers_k"] += 1
            findings.append(
                Finding(
                    question_id,
                    "unsupported",
                    f"{number.text} is neither a retrieved nor an expected value",
                )
            )

    return AnswerCheck(
        question_id=question_id,
        fields={name: answer.get(name, question.get(name)) for name in slice_fields},
        counts=counts,
        numbers=number_checks,
        findings=findings,
    )


def check_answers(
    answers: Iterable[Mapping],
    questions: Mapping[str, Mapping],
    *,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
) -> list[AnswerCheck]:
    """Check every answer; each answer's question must be in ``questions``."""
    return [
        check_answer(answer, questions[answer["question_id"]], slice_fields=slice_fields)
        for answer in answers
    ]


def slice_counts(
    checks: Sequence[AnswerCheck], *, slice_fields: Sequence[str] = DEFAULT_SLICES
) -> dict[str, dict[str, dict[str, int]]]:
    """Sum the checks into {slice: {measure: {"k", "n"}}}.

    Slices are ``all`` and ``field=value`` for each slice field. A measure
    with n = 0 in a slice is left out of it.
    """
    if not checks:
        return {}
    frame = pd.DataFrame([check.counts for check in checks], columns=_COUNT_COLUMNS)
    for name in slice_fields:
        frame[name] = [check.fields.get(name) for check in checks]

    totals = {"all": frame[_COUNT_COLUMNS].sum()}
    for name in slice_fields:
        # Answers without a value for the field belong to no slice of it.
        by_value = frame.dropna(subset=[name]).groupby(name, sort=True)[_COUNT_COLUMNS].sum()
        for value, row in by_value.iterrows():
            totals[f"{name}={value}"] = row
    return {slice_name: _measure_counts(row) for slice_name, row in totals.items()}


def merge_slice_counts(*parts: dict) -> dict[str, dict[str, dict[str, int]]]:
    """Add up slice counts of disjoint sets of answers (chunks of one run)."""
    merged: dict[str, dict[str, dict[str, int]]] = {}
    for part in parts:
        for slice_name, measures in part.items():
            target = merged.setdefault(slice_name, {})
            for measure, counts in measures.items():
                total = target.setdefault(measure, {"k": 0, "n": 0})
                total["k"] += counts["k"]
                total["n"] += counts["n"]
    # Slices in a stable order: all first, then by name.
    return dict(sorted(merged.items(), key=lambda item: (item[0] != "all", item[0])))


def _measure_counts(row: pd.Series) -> dict[str, dict[str, int]]:
    counts = {}
    for measure in MEASURES:
        n = int(row[f"{measure}_n"])
        if n:
            counts[measure] = {"k": int(row[f"{measure}_k"]), "n": n}
    return counts


@dataclass
class RunScores:
    answers: int
    slices: dict[str, dict[str, dict[str, int]]]
    findings: list[Finding]
    checks: list[AnswerCheck]

    def as_dict(self) -> dict:
        return {
            "answers": self.answers,
            "slices": self.slices,
            "findings": [finding.as_dict() for finding in self.findings],
        }


def score_run(
    answers: Iterable[Mapping],
    questions: Mapping[str, Mapping],
    *,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
) -> RunScores:
    """Score a whole run: per-answer checks, per-slice counts and findings."""
    checks = check_answers(answers, questions, slice_fields=slice_fields)
    return RunScores(
        answers=len(checks),
        slices=slice_counts(checks, slice_fields=slice_fields),
        findings=[finding for check in checks for finding in check.findings],
        checks=checks,
    )
