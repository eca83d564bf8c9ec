"""The synthetic question set: recipe 4.1's question rows, in three languages,
answer and decline questions, tuning and held-out splits."""

from __future__ import annotations

import random

from scoring.synthetic.catalogue import (
    _ANNUAL_SERIES,
    _REGIONS,
    _SERIES_CUM_WEIGHTS,
    ANNUAL_PERIODS,
    CATALOGUE,
    LANGUAGES,
    MISSING_YEARS,
    QUARTERLY_PERIODS,
    _draw_value,
)
from scoring.synthetic.wording import (
    _period_phrase,
    _question_text,
)

_LANGUAGE_CUM_WEIGHTS = (0.50, 0.80, 1.00)

DECLINE_SHARE = 0.15

TUNING_SHARE = 2 / 3

# Of the decline questions, the share about a region; the rest ask for a
# period before the series start.
SUBNATIONAL_DECLINE_SHARE = 2 / 3


def _answer_question(rng: random.Random, question_id: str, language: str, split: str) -> dict:
    series = CATALOGUE[rng.choices(range(len(CATALOGUE)), cum_weights=_SERIES_CUM_WEIGHTS)[0]]
    periods = QUARTERLY_PERIODS if series.quarterly else ANNUAL_PERIODS
    period = rng.choice(periods)
    roll = rng.random()
    caveats = ["provisional"] if roll < 0.10 else ["break in series"] if roll < 0.15 else []
    return {
        "question_id": question_id,
        "language": language,
        "question": _question_text(rng, series, _period_phrase(period, language), language),
        "expected_behaviour": "answer",
        "expected_values": [_draw_value(rng, series)],
        "expected_series": series.id,
        "expected_period": period,
        "expected_unit": series.unit,
        "expected_caveats": caveats,
        "stratum": series.stratum,
        "split": split,
    }


def _decline_question(rng: random.Random, question_id: str, language: str, split: str) -> dict:
    series = rng.choice(_ANNUAL_SERIES)
    if rng.random() < SUBNATIONAL_DECLINE_SHARE:
        region = rng.choice(_REGIONS[language])
        period = rng.choice(ANNUAL_PERIODS)
    else:
        region = ""
        period = str(rng.choice(MISSING_YEARS))
    text = _question_text(rng, series, _period_phrase(period, language), language, region)
    return {
        "question_id": question_id,
        "language": language,
        "question": text,
        "expected_behaviour": "decline",
        "expected_values": [],
        "expected_series": None,
        "expected_period": None,
        "expected_unit": None,
        "expected_caveats": [],
        # The spec files every decline question under "subnational", the
        # stratum of questions the national series cannot answer.
        "stratum": "subnational",
        "split": split,
    }


def generate_question_set(*, questions: int, seed: int, set_version: str = "demo-1.0") -> list[dict]:
    """Return ``questions`` question rows, the same for the same seed.

    About half are English, 30 % French and 20 % Spanish; 85 % should be
    answered with one value of a catalogue series, the rest declined (a region
    or a period the data do not have); two thirds fall in the tuning split and
    the rest are sealed. ``set_version`` belongs in the file header, not the
    rows; it is accepted so callers can pass one set of settings to both.
    Refuses a negative ``questions``.
    """
    if questions < 0:
        raise ValueError(f"questions must be zero or more, not {questions}")
    rng = random.Random(seed)
    width = max(4, len(str(questions)))
    rows = []
    for index in range(questions):
        question_id = f"q{index + 1:0{width}d}"
        language = rng.choices(LANGUAGES, cum_weights=_LANGUAGE_CUM_WEIGHTS)[0]
        split = "tuning" if rng.random() < TUNING_SHARE else "sealed"
        if rng.random() < DECLINE_SHARE:
            rows.append(_decline_question(rng, question_id, language, split))
        else:
            rows.append(_answer_question(rng, question_id, language, split))
    return rows
