"""A synthetic run of logged answers to a question set, with a known mix of
correct answers and the failures the automatic measures look for, and
write_jsonl to save either as JSON Lines."""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from scoring.synthetic.catalogue import (
    _ANNUAL_SERIES,
    _ANNUAL_SERIES_BY_NAME,
    _OTHER_DOMAINS,
    _REGIONS,
    _SAME_DOMAIN,
    _SERIES_BY_ID,
    ANNUAL_PERIODS,
    QUARTERLY_PERIODS,
    Series,
    _draw_value,
    _nearby_value,
    _previous_value,
)
from scoring.synthetic.wording import (
    _CAVEAT_SENTENCES,
    _DATED_TEMPLATES,
    _EXTRA_FIGURE_TEMPLATES,
    _INVENTED_TEMPLATES,
    _MAIN_TEMPLATES,
    _OTHER_SERIES_TEMPLATES,
    _PREVIOUS_VALUE_TEMPLATES,
    _SOURCE_SENTENCES,
    _YEAR_IN_TEXT,
    _capitalise,
    _cite,
    _decline_text,
    _format_value,
    _period_end_date,
    _period_phrase,
    _previous_period,
)

# Outcomes for questions that should be answered, and for those that should
# be declined, with their probabilities. The shares are what a reviewer of the
# demo should see the measures recover, give or take sampling noise.
ANSWER_OUTCOMES = {
    "correct": 0.75,
    "correct_uncited": 0.05,  # right value, no identifier named
    "wrong_value": 0.06,  # a nearby number that no record holds
    "extra_figure": 0.05,  # right value plus an invented comparison
    "unretrieved_citation": 0.05,  # right value, cites a report never retrieved
    "false_decline": 0.04,
}

DECLINE_OUTCOMES = {
    "declined": 0.70,
    "invented_figure": 0.30,
}

LONG_ANSWER_SHARE = 0.25

CAVEAT_MENTION_SHARE = 0.5

# Identifiers an assistant cites from memory; none is ever retrieved.
UNRETRIEVED_IDS = ("STATS_REPORT_2024", "NSO_BULLETIN_2023", "WB_WDI_2024", "CENSUS_2020")

DATED_SHARE = 0.15


def _cumulative(weights: dict[str, float]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    names = tuple(weights)
    running, cumulative = 0.0, []
    for name in names:
        running += weights[name]
        cumulative.append(running)
    return names, tuple(cumulative)


_ANSWER_OUTCOME_CHOICES = _cumulative(ANSWER_OUTCOMES)

_DECLINE_OUTCOME_CHOICES = _cumulative(DECLINE_OUTCOMES)


def _pick(rng: random.Random, choices: tuple[tuple[str, ...], tuple[float, ...]]) -> str:
    names, cumulative = choices
    return rng.choices(names, cum_weights=cumulative)[0]


@dataclass
class _Record:
    series: Series
    period: str
    values: list[float]  # latest first: the record's period, then the one before
    caveats: list[str]

    def as_row(self) -> dict:
        return {
            "id": self.series.id,
            "label": self.series.label,
            "values": self.values,
            "period": self.period,
            "unit": self.series.unit,
            "caveats": self.caveats,
        }


def _record(rng: random.Random, series: Series, period: str, value: float, caveats) -> _Record:
    # Like the running example, a record often carries the previous period
    # too, which gives long answers a second retrieved value to mention.
    values = [value]
    if rng.random() < 0.6:
        values.append(_previous_value(rng, series, value))
    return _Record(series, period, values, list(caveats))


def _related_records(rng: random.Random, primary: Series, primary_value: float, count: int) -> list[_Record]:
    """``count`` records of other series, preferring the primary's domain."""
    related = _SAME_DOMAIN[primary.id]
    chosen = rng.sample(related, min(count, len(related)))
    if len(chosen) < count:
        chosen += rng.sample(_OTHER_DOMAINS[primary.id], count - len(chosen))
    records = []
    for series in chosen:
        period = rng.choice(QUARTERLY_PERIODS if series.quarterly else ANNUAL_PERIODS)
        caveats = ["provisional"] if rng.random() < 0.05 else []
        if series.names == primary.names:
            # The same measure at another frequency: keep the data consistent
            # so that the annual and the quarterly rate look alike.
            value = _previous_value(rng, series, primary_value)
        else:
            value = _draw_value(rng, series)
        records.append(_record(rng, series, period, value, caveats))
    return records


def _retrieved_count(rng: random.Random) -> int:
    return rng.choices((1, 2, 3), cum_weights=(0.30, 0.75, 1.00))[0]


def _main_sentence(
    rng: random.Random, language: str, series: Series, value: float, period: str, cite: str
) -> str:
    name = series.names[language]
    written = _format_value(series, value, language)
    if rng.random() < DATED_SHARE:
        return _DATED_TEMPLATES[language].format(date=_period_end_date(period), x=name, v=written, cite=cite)
    phrase = _period_phrase(period, language)
    return rng.choice(_MAIN_TEMPLATES[language]).format(
        X=_capitalise(name), x=name, v=written, p=phrase, P=_capitalise(phrase), cite=cite
    )


def _second_value_sentence(
    rng: random.Random, language: str, records: list[_Record], cited_ids: list[str]
) -> str | None:
    """A sentence stating another retrieved value with its period, or None
    when only one value was retrieved."""
    primary = records[0]
    options = []
    if len(primary.values) > 1:
        options.append("previous")
    if len(records) > 1:
        options.append("other")
    if not options:
        return None
    if rng.choice(options) == "previous":
        phrase = _period_phrase(_previous_period(primary.period), language)
        return _PREVIOUS_VALUE_TEMPLATES[language].format(
            P=_capitalise(phrase), v=_format_value(primary.series, primary.values[1], language)
        )
    other = records[1]
    cited_ids.append(other.series.id)
    return _OTHER_SERIES_TEMPLATES[language].format(
        x=other.series.names[language],
        v=_format_value(other.series, other.values[0], language),
        p=_period_phrase(other.period, language),
        cite=_cite(other.series.id),
    )


def _finish_answer(
    rng: random.Random,
    language: str,
    sentences: list[str],
    records: list[_Record],
    cited_ids: list[str],
    caveats: list[str],
) -> tuple[str, bool]:
    """Add the optional sentences; return the text and whether it is long."""
    long = rng.random() < LONG_ANSWER_SHARE
    if long:
        second = _second_value_sentence(rng, language, records, cited_ids)
        if second is None:
            long = False
        else:
            sentences.append(second)
    if caveats and rng.random() < CAVEAT_MENTION_SHARE:
        sentences.append(_CAVEAT_SENTENCES[caveats[0]][language])
    if long and rng.random() < 0.5:
        sentences.append(_SOURCE_SENTENCES[language])
    return " ".join(sentences[:4]), long


def _respond_to_answer_question(rng: random.Random, question: dict) -> dict:
    language = question["language"]
    series = _SERIES_BY_ID[question["expected_series"]]
    value = question["expected_values"][0]
    period = question["expected_period"]
    caveats = question["expected_caveats"]
    records = [_record(rng, series, period, value, caveats)]
    records += _related_records(rng, series, value, _retrieved_count(rng) - 1)
    retrieved = {v for record in records for v in record.values}

    outcome = _pick(rng, _ANSWER_OUTCOME_CHOICES)
    if outcome == "false_decline":
        text = _decline_text(language, "not_found", series)
        return _answer_row(rng, question, records, text, [], declined=True, long=False)

    cited_ids = [series.id]
    cite = _cite(series.id)
    stated = value
    if outcome == "correct_uncited":
        cited_ids, cite = [], ""
    elif outcome == "unretrieved_citation":
        fake = rng.choice(UNRETRIEVED_IDS)
        cited_ids, cite = [fake], _cite(fake)
    elif outcome == "wrong_value":
        stated = _nearby_value(rng, series, value, retrieved)
    sentences = [_main_sentence(rng, language, series, stated, period, cite)]
    if outcome == "extra_figure":
        # A year-on-year move: a smaller gap than a misstated value.
        invented = _nearby_value(rng, series, value, retrieved, spread=(0.02, 0.08))
        sentences.append(
            _EXTRA_FIGURE_TEMPLATES[language].format(v=_format_value(series, invented, language))
        )
    text, long = _finish_answer(rng, language, sentences, records, cited_ids, caveats)
    return _answer_row(rng, question, records, text, cited_ids, declined=False, long=long)


def _topic_of_decline(rng: random.Random, question: dict) -> tuple[Series, str, str]:
    """The series, region phrase ("" if none) and year a decline question asks about."""
    language, text = question["language"], question["question"]
    series = next((s for name, s in _ANNUAL_SERIES_BY_NAME[language] if name in text), None) or rng.choice(
        _ANNUAL_SERIES
    )
    region = next((r for r in _REGIONS[language] if r in text), "")
    years = _YEAR_IN_TEXT.findall(text)
    year = years[-1] if years else ANNUAL_PERIODS[-1]
    return series, region, year


def _respond_to_decline_question(rng: random.Random, question: dict) -> dict:
    language = question["language"]
    series, region, year = _topic_of_decline(rng, question)
    # Retrieval finds the national series: for the asked year when the
    # question is about a region, else for the first year the data hold.
    period = year if region and year in ANNUAL_PERIODS else ANNUAL_PERIODS[0]
    national_value = _draw_value(rng, series)
    records = [_record(rng, series, period, national_value, [])]
    records += _related_records(rng, series, national_value, _retrieved_count(rng) - 1)

    if _pick(rng, _DECLINE_OUTCOME_CHOICES) == "declined":
        text = _decline_text(language, "subnational" if region else "period", series)
        return _answer_row(rng, question, records, text, [], declined=True, long=False)

    retrieved = {v for record in records for v in record.values}
    invented = _draw_value(rng, series, avoid=retrieved)
    cited_ids = [series.id] if rng.random() < 0.7 else []
    text = _INVENTED_TEMPLATES[language].format(
        X=_capitalise(series.names[language]),
        scope=f" {region}" if region else "",
        v=_format_value(series, invented, language),
        p=_period_phrase(year, language),
        cite=_cite(series.id) if cited_ids else "",
    )
    return _answer_row(rng, question, records, text, cited_ids, declined=False, long=False)


def _answer_row(
    rng: random.Random,
    question: dict,
    records: list[_Record],
    text: str,
    cited_ids: list[str],
    *,
    declined: bool,
    long: bool,
) -> dict:
    # One search per record, sometimes a retry; writing a long answer and
    # each extra call cost time, on top of a skewed model latency, and one
    # answer in fifty waits on a slow platform (the long tail).
    calls = len(records) + (1 if rng.random() < 0.25 else 0)
    latency = rng.lognormvariate(math.log(1400), 0.45) + 350 * calls + (900 if long else 0)
    if rng.random() < 0.02:
        latency += rng.uniform(20_000, 90_000)
    submitted = _EPOCH + timedelta(seconds=rng.uniform(0, 86_400))
    received = submitted + timedelta(milliseconds=int(latency))
    tool_calls = []
    for number in range(calls):
        started = submitted + timedelta(milliseconds=200 + 350 * number)
        tool_calls.append(
            {
                "id": f"call-{number + 1}",
                "name": "search_series",
                "started_at": _stamp(started),
                "ended_at": _stamp(started + timedelta(milliseconds=300)),
            }
        )
    return {
        "question_id": question["question_id"],
        "language": question["language"],
        "retrieved_ids": [record.series.id for record in records],
        "retrieved_values": [value for record in records for value in record.values],
        "answer": text,
        "cited_ids": cited_ids,
        "declined": declined,
        "retrieved_records": [record.as_row() for record in records],
        "submitted_at": _stamp(submitted),
        "received_at": _stamp(received),
        "tool_calls": tool_calls,
    }


_EPOCH = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def generate_run(
    *,
    question_set: list[dict],
    answers: int,
    seed: int,
    assistant_version: str = "assistant-demo-2.0",
    repetitions: int = 1,
    timeout_share: float = 0.0,
    timeout_s: int = 600,
) -> list[dict]:
    """Return ``answers`` logged answers to ``question_set``, the same for
    the same questions and seed; with ``repetitions`` above 1, that many
    attempts of each question (each line then carries ``attempt``), a
    ``timeout_share`` of them stopped at ``timeout_s`` without an answer.

    Answers go to the questions in order (question ``i % len``), one per
    question, so a run of ``len(question_set)`` answers covers the whole set.
    Refuses more answers than questions, since a question_id may appear only
    once per run, and a set whose question_ids repeat. ``assistant_version``
    belongs in the file header; it is accepted so callers can pass one set of
    settings to both.
    """
    if answers < 0:
        raise ValueError(f"answers must be zero or more, not {answers}")
    if answers > len(question_set):
        raise ValueError(
            f"answers ({answers}) exceeds the number of questions ({len(question_set)}): "
            "a run holds at most one answer per question"
        )
    question_ids = [question["question_id"] for question in question_set]
    if len(set(question_ids)) != len(question_ids):
        raise ValueError("question_set repeats a question_id")
    rng = random.Random(seed)
    rows = []
    for index in range(answers):
        question = question_set[index % len(question_set)]
        for attempt in range(1, repetitions + 1):
            if question["expected_behaviour"] == "decline":
                row = _respond_to_decline_question(rng, question)
            else:
                row = _respond_to_answer_question(rng, question)
            if repetitions > 1:
                row["attempt"] = attempt
            if rng.random() < timeout_share:
                row = _timed_out(row, timeout_s)
            rows.append(row)
    return rows


def _timed_out(row: dict, timeout_s: int) -> dict:
    """The attempt as a runner logs a timeout: when it was asked, when it was
    stopped, and no answer."""
    submitted = datetime.fromisoformat(row["submitted_at"])
    stopped = submitted + timedelta(seconds=timeout_s)
    return {
        "question_id": row["question_id"],
        "language": row["language"],
        **({"attempt": row["attempt"]} if "attempt" in row else {}),
        "status": "timeout",
        "status_reason": f"no final answer within {timeout_s} s",
        "submitted_at": row["submitted_at"],
        "stopped_at": _stamp(stopped),
        "tool_calls": row["tool_calls"],
    }


def combined_form(question_set: list[dict], rows: list[dict]) -> list[dict]:
    """``rows`` in spec 000's combined form, as its reference script reads
    them: each answer with its question's expected behaviour and values."""
    by_id = {question["question_id"]: question for question in question_set}
    return [
        {
            **row,
            "expected_behaviour": by_id[row["question_id"]]["expected_behaviour"],
            "expected_values": by_id[row["question_id"]]["expected_values"],
        }
        for row in rows
    ]


def write_jsonl(path, rows: list[dict], *, header: dict | None = None) -> None:
    """Write ``rows`` to ``path`` as JSON lines in UTF-8, after ``header``
    when one is given (recipe 4.1's files start with their versions)."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        if header is not None:
            handle.write(json.dumps(header, ensure_ascii=False) + "\n")
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
