"""A seeded sample of production questions, drawn by the time they were asked.

Spec 002: "Define the frame explicitly: every question put to the assistant
between two dates covering one show cycle, excluding nothing. Then draw. If
your traffic is lumpy, and event traffic always is, stratify ... and record the
sampling weight per stratum so you can reconstruct an overall rate afterwards."

The frame is a JSON Lines file of question lines (as a question set's, where
expected_behaviour defaults to "answer" and expected_values to [] until a lead
writes them) each with ``asked_at``, the time the question was put to the
assistant, as an ISO 8601 time with its offset. Only ``asked_at`` places a
question in the frame and in its period: when the file was uploaded, or any
other time a line holds, is never read. The sample is stratified by period
(week or month of asked_at, in UTC): each period gets its share of the size
by its share of the frame, the odd questions going to the periods with the
largest remainder, ties broken by the seed.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scoring.logfile import ErrorCollector, LineError, LogFileError
from scoring.logfile.lines import _records
from scoring.logfile.questions import normalise_question, question_errors

PERIODS = ("week", "month")
# What a frame line may leave out until a lead writes the expected answer.
FRAME_DEFAULTS = {"expected_behaviour": "answer", "expected_values": []}


@dataclass(frozen=True)
class AskedQuestion:
    question: dict
    asked_at: dt.datetime


@dataclass(frozen=True)
class ProductionDraw:
    """The questions drawn, in period then id order, and per period how many
    were drawn of how many the frame held between the dates."""

    questions: list[dict]
    periods: dict[str, tuple[int, int]]
    seed: int
    period: str
    start: dt.date
    end: dt.date

    def sentence(self) -> str:
        drawn = ", ".join(f"{key} {k} of {n}" for key, (k, n) in self.periods.items())
        population = sum(n for _, n in self.periods.values())
        return (
            f"{len(self.questions)} of {population} production questions asked from {self.start} "
            f"to {self.end}, drawn by {self.period} of asked_at (seed {self.seed}): {drawn}"
        )


def parse_asked_at(value) -> dt.datetime | str:
    """The time ``value`` states, in UTC, or what is wrong with it."""
    if not isinstance(value, str):
        return "must be an ISO 8601 time with its offset, such as 2026-11-03T09:30:00Z"
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        return f"{value!r} is not an ISO 8601 time, such as 2026-11-03T09:30:00Z"
    if moment.tzinfo is None:
        return f"{value!r} has no offset: write Z or +01:00 so that it names one moment"
    return moment.astimezone(dt.UTC)


def read_frame(
    path: Path, *, max_errors: int = 200, max_line_bytes: int | None = None
) -> list[AskedQuestion]:
    """Every question of the frame file with its asked time; raise
    LogFileError naming each bad line and field (a line without asked_at
    among them)."""
    collector = ErrorCollector(max_errors)
    asked: list[AskedQuestion] = []
    first_seen: dict[str, int] = {}
    for logged in _records(path, collector, max_line_bytes=max_line_bytes):
        number, record = logged.line, {**FRAME_DEFAULTS, **logged.record}
        errors = question_errors(number, record)
        moment = parse_asked_at(record["asked_at"]) if "asked_at" in record else "missing"
        if isinstance(moment, str):
            errors.append(LineError(number, "asked_at", moment))
        if not errors and (earlier := first_seen.get(record["question_id"])) is not None:
            errors.append(
                LineError(number, "question_id", f"{record['question_id']!r} already on line {earlier}")
            )
        collector.add(errors)
        if not errors:
            first_seen[record["question_id"]] = number
            asked.append(AskedQuestion(normalise_question(record), moment))
    if not asked and not collector.total:
        collector.add([LineError(1, None, "the file holds no questions")])
    collector.raise_if_any()
    return asked


def period_of(moment: dt.datetime, period: str) -> str:
    """The week (2026-W45, ISO) or month (2026-11) of a UTC time."""
    if period == "week":
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    return f"{moment.year}-{moment.month:02d}"


def draw_by_asked_time(
    asked: Iterable[AskedQuestion], *, start: dt.date, end: dt.date, size: int, period: str, seed: int
) -> ProductionDraw:
    """``size`` questions of those asked from ``start`` to ``end`` (both
    days included, UTC), stratified by ``period``, drawn with ``seed``; the
    same seed and frame give the same draw whatever the order of the lines.
    Refuses (ValueError) an unknown period, dates in the wrong order, a size
    below 1 and a size above the questions asked in the dates."""
    if period not in PERIODS:
        raise ValueError(f"period: must be one of {', '.join(PERIODS)}, not {period!r}")
    if end < start:
        raise ValueError(f"to: {end} is before from: {start}")
    if size < 1:
        raise ValueError("size: draw at least one question")
    by_period: dict[str, list[dict]] = {}
    for item in asked:
        if start <= item.asked_at.date() <= end:
            by_period.setdefault(period_of(item.asked_at, period), []).append(item.question)
    population = sum(len(questions) for questions in by_period.values())
    if size > population:
        raise ValueError(f"size: {size} is more than the {population} questions asked from {start} to {end}")
    rng = random.Random(seed)
    keys = sorted(by_period)
    exact = {key: size * len(by_period[key]) / population for key in keys}
    shares = {key: int(exact[key]) for key in keys}
    tie_breaks = {key: rng.random() for key in keys}
    left = size - sum(shares.values())
    for key in sorted(keys, key=lambda key: (-(exact[key] - shares[key]), tie_breaks[key]))[:left]:
        shares[key] += 1
    drawn: list[dict] = []
    periods: dict[str, tuple[int, int]] = {}
    for key in keys:
        questions = sorted(by_period[key], key=lambda question: question["question_id"])
        chosen = sorted(rng.sample(questions, shares[key]), key=lambda question: question["question_id"])
        drawn.extend({**question, "stratum": question.get("stratum") or key} for question in chosen)
        periods[key] = (shares[key], len(questions))
    return ProductionDraw(drawn, periods, seed, period, start, end)


__all__ = ["PERIODS", "LogFileError", "ProductionDraw", "draw_by_asked_time", "read_frame"]
