"""Answers shaped like spec 000's running example, for the scoring benchmark.

generate_run (scoring.synthetic.runs) answers most questions in one sentence
with one figure and its year. Logged answers are longer: the running example
states a value with the year before it and cites one or two series, and
assistants add a neighbouring series, a denominator ("per 1,000 live
births"), a date, and, when they decline, the national figure they did find.
generate_realistic_run answers a synthetic question set that way: four to six
numbers an answer, in English, French and Spanish, with decimal commas and
thousands grouped by a space (French, Spanish) or a comma (English).

Every number is written within the rules both spec 000's reference script
and the scorer read by, so that their counts agree:

- no value from 1900 to 2100 other than a year (the reference takes any
  such whole value for a year, the scorer only four plain digits), no
  minus signs, no hyphen after a letter, no ordinals written in digits;
- dates are YYYY-MM-DD, denominators follow a lowercase "per" then a word,
  two numbers are never separated by a space or a comma alone;
- no "." grouping and at most two decimals, so that "1 250,5" and "7,3"
  read one way; an invented English "12,300" never has a retrieved 12.3
  beside it (the scorer also reads that token as 12.3, the reference not).

The timestamps and tool calls are generate_run's (one search per record).
"""

from __future__ import annotations

import random

from scoring.synthetic.catalogue import (
    _SERIES_BY_ID,
    ANNUAL_PERIODS,
    Series,
    _draw_value,
    _nearby_value,
    _previous_value,
)
from scoring.synthetic.runs import (
    UNRETRIEVED_IDS,
    _answer_row,
    _main_sentence,
    _Record,
    _related_records,
    _topic_of_decline,
)
from scoring.synthetic.wording import (
    _CAVEAT_SENTENCES,
    _DECLINE_OPENINGS,
    _EXTRA_FIGURE_TEMPLATES,
    _INVENTED_TEMPLATES,
    _OTHER_SERIES_TEMPLATES,
    _PREVIOUS_VALUE_TEMPLATES,
    _capitalise,
    _cite,
    _decline_text,
    _format_value,
    _period_phrase,
    _previous_period,
)

# What happens to a question that should be answered, and to one that should
# be declined. Declines that state a figure are the ones the unsupported
# numbers must still read.
ANSWER_OUTCOMES = {
    "correct": 0.72,
    "wrong_value": 0.06,
    "extra_figure": 0.06,
    "unretrieved_citation": 0.06,
    "uncited": 0.04,
    "false_decline_with_figure": 0.04,
    "false_decline": 0.02,
}
DECLINE_OUTCOMES = {
    "declined": 0.40,
    "declined_with_figure": 0.30,
    "invented_figure": 0.30,
}
PREVIOUS_VALUE_SHARE = 0.85
SECOND_RELATED_SHARE = 0.15
UPDATED_SHARE = 0.20

_UPDATED_SENTENCES = {
    "en": "The series was last updated on {date}.",
    "fr": "La série a été mise à jour le {date}.",
    "es": "La serie se actualizó el {date}.",
}
# After the decline's opening: the national figures the assistant did find.
_NATIONAL_FIGURES = {
    "en": "the retrieved data hold only the national series, at {v} {p} and {v2} {p2}{cite}.",
    "fr": "les données récupérées ne contiennent que la série nationale, à {v} {p} et {v2} {p2}{cite}.",
    "es": "los datos recuperados solo contienen la serie nacional, con {v} {p} y {v2} {p2}{cite}.",
}
_INVENTED_WITH_NATIONAL = {
    "en": "{X}{scope} was {v} {p}, against {national} for the whole country {pn}{cite}.",
    "fr": "{X}{scope} s'établissait à {v} {p}, contre {national} pour l'ensemble du pays {pn}{cite}.",
    "es": "{X}{scope} fue de {v} {p}, frente a {national} para el conjunto del país {pn}{cite}.",
}
_UNCONFIRMED = {
    "en": "I cannot confirm {x} {p}: the retrieved data give {v} {pp}{cite} and no later value.",
    "fr": "Je ne peux pas confirmer {x} {p} : les données récupérées donnent {v} {pp}{cite} "
    "et aucune valeur plus récente.",
    "es": "No puedo confirmar {x} {p}: los datos recuperados dan {v} {pp}{cite} y ningún valor posterior.",
}


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(tuple(weights), weights=tuple(weights.values()))[0]


def _primary(rng: random.Random, series: Series, period: str, value: float, caveats) -> _Record:
    """The asked series' record, with the period before it as the running example's has."""
    return _Record(series, period, [value, _previous_value(rng, series, value)], list(caveats))


def _invented(rng: random.Random, series: Series, near: float, retrieved: set[float]) -> float:
    """A value no record holds, near ``near``, whose English "12,300" cannot
    also be read as a retrieved 12.3."""
    avoid = retrieved | {round(value * 1000, 6) for value in retrieved}
    return _nearby_value(rng, series, near, avoid)


def _updated(rng: random.Random, language: str) -> str:
    date = f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return _UPDATED_SENTENCES[language].format(date=date)


def _answer(rng: random.Random, question: dict) -> dict:
    language = question["language"]
    series = _SERIES_BY_ID[question["expected_series"]]
    value, period = question["expected_values"][0], question["expected_period"]
    primary = _primary(rng, series, period, value, question["expected_caveats"])
    records = [primary, *_related_records(rng, series, value, rng.choice((1, 2)))]
    retrieved = {v for record in records for v in record.values}
    outcome = _pick(rng, ANSWER_OUTCOMES)

    if outcome.startswith("false_decline"):
        if outcome == "false_decline":
            text = _decline_text(language, "not_found", series)
            return _answer_row(rng, question, records, text, [], declined=True, long=False)
        text = _UNCONFIRMED[language].format(
            x=series.names[language],
            p=_period_phrase(period, language),
            v=_format_value(series, primary.values[1], language),
            pp=_period_phrase(_previous_period(period), language),
            cite=_cite(series.id),
        )
        return _answer_row(rng, question, records, text, [series.id], declined=True, long=False)

    cited_ids = [] if outcome == "uncited" else [series.id]
    if outcome == "unretrieved_citation":
        cited_ids.append(rng.choice(UNRETRIEVED_IDS))
    cite = f" ({'; '.join(cited_ids)})" if cited_ids else ""
    stated = _invented(rng, series, value, retrieved) if outcome == "wrong_value" else value
    sentences = [_main_sentence(rng, language, series, stated, period, cite)]
    if rng.random() < PREVIOUS_VALUE_SHARE:
        sentences.append(
            _PREVIOUS_VALUE_TEMPLATES[language].format(
                P=_capitalise(_period_phrase(_previous_period(period), language)),
                v=_format_value(series, primary.values[1], language),
            )
        )
    if outcome == "extra_figure":
        sentences.append(
            _EXTRA_FIGURE_TEMPLATES[language].format(
                v=_format_value(series, _invented(rng, series, value, retrieved), language)
            )
        )
    mentioned = records[1:] if rng.random() < SECOND_RELATED_SHARE else records[1:2]
    # The first neighbour "for comparison", a second one plainly stated.
    for other, template in zip(mentioned, (_OTHER_SERIES_TEMPLATES, _INVENTED_TEMPLATES), strict=False):
        if cited_ids:
            cited_ids.append(other.series.id)
        name = other.series.names[language]
        sentences.append(
            template[language].format(
                x=name,
                X=_capitalise(name),
                scope="",
                v=_format_value(other.series, other.values[0], language),
                p=_period_phrase(other.period, language),
                cite=_cite(other.series.id) if cited_ids else "",
            )
        )
    if primary.caveats and rng.random() < 0.5:
        sentences.append(_CAVEAT_SENTENCES[primary.caveats[0]][language])
    if rng.random() < UPDATED_SHARE:
        sentences.append(_updated(rng, language))
    return _answer_row(rng, question, records, " ".join(sentences), cited_ids, declined=False, long=True)


def _decline(rng: random.Random, question: dict) -> dict:
    language = question["language"]
    series, region, year = _topic_of_decline(rng, question)
    # The national series, for the asked year when the question is about a
    # region, else for the first year the data hold.
    period = year if region and year in ANNUAL_PERIODS else ANNUAL_PERIODS[0]
    primary = _primary(rng, series, period, _draw_value(rng, series), [])
    records = [primary, *_related_records(rng, series, primary.values[0], rng.choice((0, 1)))]
    outcome = _pick(rng, DECLINE_OUTCOMES)
    if outcome == "declined":
        text = _decline_text(language, "subnational" if region else "period", series)
        return _answer_row(rng, question, records, text, [], declined=True, long=False)
    if outcome == "declined_with_figure":
        text = _DECLINE_OPENINGS[language] + _NATIONAL_FIGURES[language].format(
            v=_format_value(series, primary.values[0], language),
            p=_period_phrase(period, language),
            v2=_format_value(series, primary.values[1], language),
            p2=_period_phrase(_previous_period(period), language),
            cite=_cite(series.id),
        )
        return _answer_row(rng, question, records, text, [series.id], declined=True, long=False)
    retrieved = {v for record in records for v in record.values}
    cited_ids = [series.id] if rng.random() < 0.7 else []
    text = _INVENTED_WITH_NATIONAL[language].format(
        X=_capitalise(series.names[language]),
        scope=f" {region}" if region else "",
        v=_format_value(series, _invented(rng, series, primary.values[0], retrieved), language),
        p=_period_phrase(year, language),
        national=_format_value(series, primary.values[0], language),
        pn=_period_phrase(period, language),
        cite=_cite(series.id) if cited_ids else "",
    )
    return _answer_row(rng, question, records, text, cited_ids, declined=False, long=False)


def generate_realistic_run(*, question_set: list[dict], answers: int, seed: int) -> list[dict]:
    """Return ``answers`` logged answers to the first questions of
    ``question_set`` (a scoring.synthetic question set), one a question, the
    same for the same questions and seed. Refuses more answers than questions."""
    if not 0 <= answers <= len(question_set):
        raise ValueError(f"answers must be from 0 to the {len(question_set)} questions, not {answers}")
    rng = random.Random(seed)
    return [
        (_decline if question["expected_behaviour"] == "decline" else _answer)(rng, question)
        for question in question_set[:answers]
    ]
