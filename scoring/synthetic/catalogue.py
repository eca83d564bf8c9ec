"""The synthetic catalogue: its series, periods and regions, and how values are
drawn for a series (within its range, never mistakable for a year)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

LANGUAGES = ("en", "fr", "es")

# Periods the synthetic data hold. Decline questions ask for years well
# before the first one.
ANNUAL_PERIODS = tuple(str(year) for year in range(2014, 2025))

QUARTERLY_PERIODS = tuple(f"{year}-Q{quarter}" for year in range(2022, 2026) for quarter in range(1, 5))[
    :-2
]  # up to 2025-Q2, the latest quarter published

MISSING_YEARS = tuple(range(1955, 1976))


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
