"""A seeded, synthetic evaluation run in English, French and Spanish.

Used for the app's demo data and for benchmarks: a question set (recipe 4.1's
question rows) and a run of logged answers to it, with a known mix of correct
answers and the failures the automatic measures look for (wrong values,
invented figures, citations of records never retrieved, wrong refusals).

Everything is drawn from one ``random.Random(seed)`` per call, so a seed always
gives the same rows. Standard library only: this must run anywhere the
scoring library runs.

Answer texts are written within the number rules the scorer reads them by:
dates are YYYY-MM-DD, denominators follow "per", identifiers are capitals,
digits and underscores, and numbers use "." or "," decimals with groups of
three after a space or comma. French and Spanish group thousands with a plain
space ("1 250") so that no Spanish "1.250" can be misread as a decimal, and
write their denominators in words ("pour mille", "por cada mil"), because the
scorer only blanks English "per 1,000"-style denominators.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["generate_question_set", "generate_run", "write_jsonl"]

LANGUAGES = ("en", "fr", "es")
_LANGUAGE_CUM_WEIGHTS = (0.50, 0.80, 1.00)

DECLINE_SHARE = 0.15
TUNING_SHARE = 2 / 3
# Of the decline questions, the share about a region; the rest ask for a
# period before the series start.
SUBNATIONAL_DECLINE_SHARE = 2 / 3

# Periods the synthetic data hold. Decline questions ask for years well
# before the first one.
ANNUAL_PERIODS = tuple(str(year) for year in range(2014, 2025))
QUARTERLY_PERIODS = tuple(f"{year}-Q{quarter}" for year in range(2022, 2026) for quarter in range(1, 5))[
    :-2
]  # up to 2025-Q2, the latest quarter published
MISSING_YEARS = tuple(range(1955, 1976))

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


@dataclass(frozen=True)
class Series:
    """One series of the synthetic catalogue and how its values are written."""

    id: str
    label: str  # the catalogue label, stored with retrieved records
    unit: str
    low: float
    high: float
    decimals: int
    stratum: str  # "level" or "change"
    style: str  # key into _VALUE_STYLES
    quarterly: bool
    # The series as a noun phrase with its article, per language, as it
    # reads mid-sentence; fr_feminine picks "Quel"/"Quelle".
    names: dict[str, str]
    fr_feminine: bool = False

    @property
    def domain(self) -> str:
        return self.id.split("_", 1)[0]


def _names(en: str, fr: str, es: str) -> dict[str, str]:
    return {"en": en, "fr": fr, "es": es}


# Ranges are plausible for one middle-income country. Integer-valued series
# stay clear of 1900-2100 so that no value can be taken for a year.
CATALOGUE: tuple[Series, ...] = (
    Series(
        "LAB_UNEMP_RATE",
        "Unemployment rate",
        "percent of labour force",
        3.0,
        14.0,
        1,
        "level",
        "percent",
        False,
        _names("the unemployment rate", "le taux de chômage", "la tasa de desempleo"),
    ),
    Series(
        "LAB_UNEMP_RATE_Q",
        "Unemployment rate, quarterly",
        "percent of labour force",
        3.0,
        14.0,
        1,
        "level",
        "percent",
        True,
        _names("the unemployment rate", "le taux de chômage", "la tasa de desempleo"),
    ),
    Series(
        "LAB_YOUTH_UNEMP",
        "Youth unemployment rate",
        "percent of youth labour force",
        8.0,
        38.0,
        1,
        "level",
        "percent",
        False,
        _names(
            "the youth unemployment rate",
            "le taux de chômage des jeunes",
            "la tasa de desempleo juvenil",
        ),
    ),
    Series(
        "LAB_PARTIC_RATE",
        "Labour force participation rate",
        "percent of working-age population",
        52.0,
        74.0,
        1,
        "level",
        "percent",
        False,
        _names(
            "the labour force participation rate",
            "le taux d'activité",
            "la tasa de participación laboral",
        ),
    ),
    Series(
        "HLTH_LIFE_EXP",
        "Life expectancy at birth",
        "years",
        62.0,
        83.0,
        1,
        "level",
        "years",
        False,
        _names(
            "life expectancy at birth",
            "l'espérance de vie à la naissance",
            "la esperanza de vida al nacer",
        ),
        fr_feminine=True,
    ),
    Series(
        "HLTH_U5_MORT",
        "Under-five mortality rate",
        "deaths per 1,000 live births",
        4.0,
        85.0,
        1,
        "level",
        "per_thousand_births",
        False,
        _names(
            "the under-five mortality rate",
            "le taux de mortalité des moins de cinq ans",
            "la tasa de mortalidad de menores de cinco años",
        ),
    ),
    Series(
        "HLTH_INF_MORT",
        "Infant mortality rate",
        "deaths per 1,000 live births",
        3.0,
        60.0,
        1,
        "level",
        "per_thousand_births",
        False,
        _names(
            "the infant mortality rate",
            "le taux de mortalité infantile",
            "la tasa de mortalidad infantil",
        ),
    ),
    Series(
        "HLTH_MAT_MORT",
        "Maternal mortality ratio",
        "deaths per 100,000 live births",
        12.0,
        550.0,
        0,
        "level",
        "per_hundred_thousand_births",
        False,
        _names(
            "the maternal mortality ratio",
            "le taux de mortalité maternelle",
            "la razón de mortalidad materna",
        ),
    ),
    Series(
        "HLTH_HOSP_BEDS",
        "Hospital beds",
        "beds per 1,000 people",
        0.8,
        5.5,
        1,
        "level",
        "per_thousand_people",
        False,
        _names(
            "hospital bed density",
            "la densité de lits d'hôpital",
            "la densidad de camas hospitalarias",
        ),
        fr_feminine=True,
    ),
    Series(
        "POP_URBAN_THOUS",
        "Urban population",
        "thousands of people",
        800.0,
        45000.0,
        0,
        "level",
        "thousands",
        False,
        _names("the urban population", "la population urbaine", "la población urbana"),
        fr_feminine=True,
    ),
    Series(
        "POP_GROWTH_ANN",
        "Population growth",
        "annual percent",
        0.2,
        3.2,
        1,
        "change",
        "percent",
        False,
        _names("population growth", "la croissance démographique", "el crecimiento de la población"),
        fr_feminine=True,
    ),
    Series(
        "GDP_GROWTH_ANN",
        "Real GDP growth",
        "annual percent",
        0.4,
        6.8,
        1,
        "change",
        "percent",
        False,
        _names("real GDP growth", "la croissance du PIB réel", "el crecimiento del PIB real"),
        fr_feminine=True,
    ),
    Series(
        "GDP_GROWTH_Q",
        "Real GDP growth, quarterly, year on year",
        "percent, year on year",
        0.2,
        7.5,
        1,
        "change",
        "percent",
        True,
        _names("real GDP growth", "la croissance du PIB réel", "el crecimiento del PIB real"),
        fr_feminine=True,
    ),
    Series(
        "CPI_INFL_ANN",
        "Consumer price inflation",
        "annual percent",
        0.8,
        9.6,
        1,
        "change",
        "percent",
        False,
        _names(
            "consumer price inflation",
            "l'inflation des prix à la consommation",
            "la inflación de precios al consumidor",
        ),
        fr_feminine=True,
    ),
    Series(
        "EDU_PRIM_COMPL",
        "Primary completion rate",
        "percent of relevant age group",
        68.0,
        99.5,
        1,
        "level",
        "percent",
        False,
        _names(
            "the primary completion rate",
            "le taux d'achèvement du primaire",
            "la tasa de finalización de la educación primaria",
        ),
    ),
    Series(
        "GDP_PC_USD",
        "GDP per capita",
        "current US dollars",
        2500.0,
        18000.0,
        0,
        "level",
        "us_dollars",
        False,
        _names("GDP per capita", "le PIB par habitant", "el PIB per cápita"),
    ),
    Series(
        "ENE_ELEC_ACCESS",
        "Access to electricity",
        "percent of population",
        40.0,
        99.5,
        1,
        "level",
        "percent",
        False,
        _names(
            "the share of the population with access to electricity",
            "la part de la population ayant accès à l'électricité",
            "el porcentaje de la población con acceso a la electricidad",
        ),
        fr_feminine=True,
    ),
    Series(
        "FS_UNDERNOURISH_PCT",
        "Prevalence of undernourishment",
        "percent of population",
        2.0,
        25.0,
        1,
        "level",
        "percent",
        False,
        _names(
            "the prevalence of undernourishment",
            "la prévalence de la sous-alimentation",
            "la prevalencia de la subalimentación",
        ),
        fr_feminine=True,
    ),
)
_SERIES_BY_ID = {series.id: series for series in CATALOGUE}
# Change series are few in the catalogue; weighting them up keeps the
# "change" stratum large enough to be scored on its own.
_SERIES_CUM_WEIGHTS = tuple(
    math.fsum(2.0 if s.stratum == "change" else 1.0 for s in CATALOGUE[: i + 1])
    for i in range(len(CATALOGUE))
)
# Decline questions are about annual series: the answers recover the series
# from the question text, and annual names are unique per language.
_ANNUAL_SERIES = tuple(series for series in CATALOGUE if not series.quarterly)

_VALUE_STYLES = {
    "percent": {"en": "{n}%", "fr": "{n} %", "es": "{n} %"},
    "years": {"en": "{n} years", "fr": "{n} ans", "es": "{n} años"},
    "per_thousand_births": {
        "en": "{n} per 1,000 live births",
        "fr": "{n} pour mille naissances vivantes",
        "es": "{n} por cada mil nacidos vivos",
    },
    "per_hundred_thousand_births": {
        "en": "{n} per 100,000 live births",
        "fr": "{n} pour cent mille naissances vivantes",
        "es": "{n} por cada cien mil nacidos vivos",
    },
    "per_thousand_people": {
        "en": "{n} beds per 1,000 people",
        "fr": "{n} lits pour mille habitants",
        "es": "{n} camas por cada mil habitantes",
    },
    "thousands": {
        "en": "{n} thousand people",
        "fr": "{n} milliers d'habitants",
        "es": "{n} miles de personas",
    },
    "us_dollars": {
        "en": "{n} US dollars",
        "fr": "{n} dollars américains",
        "es": "{n} dólares estadounidenses",
    },
}

_QUARTER_WORDS = {
    "en": ("first", "second", "third", "fourth"),
    "fr": ("premier", "deuxième", "troisième", "quatrième"),
    "es": ("primer", "segundo", "tercer", "cuarto"),
}
_PERIOD_PHRASES = {
    "en": {"year": "in {year}", "quarter": "in the {quarter} quarter of {year}"},
    "fr": {"year": "en {year}", "quarter": "au {quarter} trimestre {year}"},
    "es": {"year": "en {year}", "quarter": "en el {quarter} trimestre de {year}"},
}
_QUARTER_END = {"1": "03-31", "2": "06-30", "3": "09-30", "4": "12-31"}

# Region phrases carry their preposition so they slot in after the series.
_REGIONS = {
    "en": (
        "in the Northern Province",
        "in the capital district",
        "in the coastal region",
        "in the Eastern Highlands",
        "in the rural areas of the South",
    ),
    "fr": (
        "dans la province du Nord",
        "dans le district de la capitale",
        "dans la région côtière",
        "dans les hauts plateaux de l'Est",
        "dans les zones rurales du Sud",
    ),
    "es": (
        "en la provincia del Norte",
        "en el distrito capital",
        "en la región costera",
        "en el altiplano oriental",
        "en las zonas rurales del Sur",
    ),
}

# {x}: the series, {p}: the period phrase, {quel}: French "Quel"/"Quelle".
_QUESTION_TEMPLATES = {
    "en": (
        "What was {x} {p}?",
        "Could you tell me {x} {p}?",
        "What figure do you have for {x} {p}?",
    ),
    "fr": (
        "{quel} était {x} {p} ?",
        "Pouvez-vous me donner {x} {p} ?",
        "À combien s'élevait {x} {p} ?",
    ),
    "es": ("¿Cuál fue {x} {p}?", "¿Me puede indicar {x} {p}?", "¿Qué valor tuvo {x} {p}?"),
}

# The answer's first sentence. {X}/{x}: the series (capitalised or not),
# {v}: the value as written, {p}/{P}: the period phrase, {cite}: " (ID)" or "".
_MAIN_TEMPLATES = {
    "en": (
        "{X} was {v} {p}{cite}.",
        "{P}, {x} stood at {v}{cite}.",
        "According to the retrieved data{cite}, {x} was {v} {p}.",
        "The figure for {x} {p} is {v}{cite}.",
    ),
    "fr": (
        "{X} s'établissait à {v} {p}{cite}.",
        "{P}, {x} était de {v}{cite}.",
        "D'après les données récupérées{cite}, {x} atteignait {v} {p}.",
        "Le chiffre pour {x} {p} est de {v}{cite}.",
    ),
    "es": (
        "{X} fue de {v} {p}{cite}.",
        "{P}, {x} se situó en {v}{cite}.",
        "Según los datos recuperados{cite}, {x} alcanzó {v} {p}.",
        "El valor registrado para {x} {p} es {v}{cite}.",
    ),
}
# The same with the period given as the date the value refers to.
_DATED_TEMPLATES = {
    "en": "As of {date}, {x} was {v}{cite}.",
    "fr": "Au {date}, {x} s'établissait à {v}{cite}.",
    "es": "Al {date}, {x} era de {v}{cite}.",
}
DATED_SHARE = 0.15
# An answer to a decline question that makes a figure up; {scope} is the
# region phrase with a leading space, or "".
_INVENTED_TEMPLATES = {
    "en": "{X}{scope} was {v} {p}{cite}.",
    "fr": "{X}{scope} s'établissait à {v} {p}{cite}.",
    "es": "{X}{scope} fue de {v} {p}{cite}.",
}
_PREVIOUS_VALUE_TEMPLATES = {
    "en": "{P}, the figure was {v}.",
    "fr": "{P}, ce chiffre était de {v}.",
    "es": "{P}, la cifra era de {v}.",
}
_OTHER_SERIES_TEMPLATES = {
    "en": "For comparison, {x} was {v} {p}{cite}.",
    "fr": "À titre de comparaison, {x} s'établissait à {v} {p}{cite}.",
    "es": "Como referencia, {x} fue de {v} {p}{cite}.",
}
_EXTRA_FIGURE_TEMPLATES = {
    "en": "That compares with {v} a year earlier.",
    "fr": "Cela se compare à {v} un an plus tôt.",
    "es": "Esto se compara con {v} un año antes.",
}
_CAVEAT_SENTENCES = {
    "provisional": {
        "en": "Note that this figure is provisional.",
        "fr": "Ce chiffre est provisoire.",
        "es": "Esta cifra es provisional.",
    },
    "break in series": {
        "en": "Note that the series has a break, so earlier years are not fully comparable.",
        "fr": "Attention : la série présente une rupture, les années antérieures ne sont pas "
        "entièrement comparables.",
        "es": "Hay una ruptura en la serie, por lo que los años anteriores no son del todo comparables.",
    },
}
_SOURCE_SENTENCES = {
    "en": "The figures come from the national statistics office.",
    "fr": "Les chiffres proviennent de l'institut national de la statistique.",
    "es": "Las cifras proceden del instituto nacional de estadística.",
}
_DECLINE_OPENINGS = {
    "en": "I cannot answer this: ",
    "fr": "Je ne peux pas répondre à cette question : ",
    "es": "No puedo responder a esta pregunta: ",
}
_DECLINE_REASONS = {
    "subnational": {
        "en": "the available statistics cover the country as a whole, not its regions.",
        "fr": "les statistiques disponibles portent sur l'ensemble du pays, pas sur ses régions.",
        "es": "las estadísticas disponibles cubren el país en su conjunto, no sus regiones.",
    },
    "period": {
        "en": "the retrieved data do not cover that period.",
        "fr": "les données récupérées ne couvrent pas cette période.",
        "es": "los datos recuperados no cubren ese período.",
    },
    "not_found": {
        "en": "I could not find {x} for that period in the retrieved data.",
        "fr": "je n'ai pas trouvé {x} pour cette période dans les données récupérées.",
        "es": "no encontré {x} para ese período en los datos recuperados.",
    },
}

# Decline questions carry no series (the row schema is fixed), so answers
# recover it from the question text this module wrote. Longest names first,
# so "le taux de chômage des jeunes" wins over "le taux de chômage".
_ANNUAL_SERIES_BY_NAME = {
    language: sorted(
        ((series.names[language], series) for series in _ANNUAL_SERIES),
        key=lambda pair: -len(pair[0]),
    )
    for language in LANGUAGES
}
# Retrieval returns neighbours of the asked series, same domain first.
_SAME_DOMAIN = {
    series.id: tuple(s for s in CATALOGUE if s.domain == series.domain and s.id != series.id)
    for series in CATALOGUE
}
_OTHER_DOMAINS = {series.id: tuple(s for s in CATALOGUE if s.domain != series.domain) for series in CATALOGUE}
_YEAR_IN_TEXT = re.compile(r"\b(?:19|20)\d{2}\b")


# ---------------------------------------------------------------- helpers


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


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


def _looks_like_year(value: float, decimals: int) -> bool:
    return decimals == 0 and 1900 <= value <= 2100


def _ceiling(series: Series) -> float:
    # Shares cannot reach 100 %, and a "nearby" wrong value should stay plausible.
    upper = series.high * 1.3
    return min(upper, 99.9) if series.style == "percent" else upper


def _acceptable(series: Series, value: float, avoid) -> bool:
    return (
        0 < value <= _ceiling(series) and value not in avoid and not _looks_like_year(value, series.decimals)
    )


def _draw_value(rng: random.Random, series: Series, avoid=()) -> float:
    """A value in the series' range, none of ``avoid``, never a year."""
    while True:
        value = round(rng.uniform(series.low, series.high), series.decimals)
        if _acceptable(series, value, avoid):
            return float(value)


def _nearby_value(rng: random.Random, series: Series, value: float, avoid, *, spread=(0.04, 0.15)) -> float:
    """A plausible misstatement of ``value``: off by a share within ``spread``
    (at least one last digit), and none of ``avoid``."""
    step = 10.0**-series.decimals
    for _ in range(20):
        shift = max(step, abs(value) * rng.uniform(*spread))
        candidate = round(value + rng.choice((-1, 1)) * shift, series.decimals)
        if _acceptable(series, candidate, avoid):
            return float(candidate)
    # Near the edge of the range the random shifts can keep failing; walk
    # outwards one step at a time instead, which always ends.
    for k in range(1, 10_000):
        for candidate in (value - k * step, value + k * step):
            candidate = round(candidate, series.decimals)
            if _acceptable(series, candidate, avoid):
                return float(candidate)
    raise RuntimeError(f"no value near {value} for {series.id}")  # pragma: no cover


def _previous_value(rng: random.Random, series: Series, value: float) -> float:
    """The value one period earlier: a small move from ``value``."""
    candidate = round(value * (1 + rng.gauss(0, 0.04)), series.decimals)
    if not _acceptable(series, candidate, ()):
        return value
    return float(candidate)


def _previous_period(period: str) -> str:
    if "-Q" in period:
        year, quarter = (int(part) for part in period.split("-Q"))
        return f"{year - 1}-Q4" if quarter == 1 else f"{year}-Q{quarter - 1}"
    return str(int(period) - 1)


def _period_phrase(period: str, language: str) -> str:
    phrases = _PERIOD_PHRASES[language]
    if "-Q" in period:
        year, quarter = period.split("-Q")
        quarter_word = _QUARTER_WORDS[language][int(quarter) - 1]
        return phrases["quarter"].format(quarter=quarter_word, year=year)
    return phrases["year"].format(year=period)


def _period_end_date(period: str) -> str:
    if "-Q" in period:
        year, quarter = period.split("-Q")
        return f"{year}-{_QUARTER_END[quarter]}"
    return f"{period}-12-31"


def _format_number(value: float, decimals: int, language: str) -> str:
    text = f"{value:,.{decimals}f}"
    if language == "en":
        return text
    # French and Spanish: comma decimals, a plain space between thousands.
    return text.replace(",", " ").replace(".", ",")


def _format_value(series: Series, value: float, language: str) -> str:
    number = _format_number(value, series.decimals, language)
    return _VALUE_STYLES[series.style][language].format(n=number)


# ---------------------------------------------------------- question set


def _question_text(
    rng: random.Random, series: Series, period_phrase: str, language: str, region: str = ""
) -> str:
    template = rng.choice(_QUESTION_TEMPLATES[language])
    scope = f"{series.names[language]} {region}" if region else series.names[language]
    quel = "Quelle" if series.fr_feminine else "Quel"
    return template.format(x=scope, p=period_phrase, quel=quel)


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


# ------------------------------------------------------------------- run


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


def _cite(series_id: str) -> str:
    return f" ({series_id})"


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


def _decline_text(language: str, reason: str, series: Series) -> str:
    reason_text = _DECLINE_REASONS[reason][language].format(x=series.names[language])
    return _DECLINE_OPENINGS[language] + reason_text


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


def write_jsonl(path, rows: list[dict], *, header: dict | None = None) -> None:
    """Write ``rows`` to ``path`` as JSON lines in UTF-8, after ``header``
    when one is given (recipe 4.1's files start with their versions)."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        if header is not None:
            handle.write(json.dumps(header, ensure_ascii=False) + "\n")
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
