"""The words of the synthetic data in English, French and Spanish: question and
answer templates, periods, values with their units, citations and the
reasons for declining. Written within the number rules the scorer reads them
by (see scoring.synthetic)."""

from __future__ import annotations

import random
import re

from scoring.synthetic.catalogue import (
    Series,
)

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

_YEAR_IN_TEXT = re.compile(r"\b(?:19|20)\d{2}\b")


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


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


def _question_text(
    rng: random.Random, series: Series, period_phrase: str, language: str, region: str = ""
) -> str:
    template = rng.choice(_QUESTION_TEMPLATES[language])
    scope = f"{series.names[language]} {region}" if region else series.names[language]
    quel = "Quelle" if series.fr_feminine else "Quel"
    return template.format(x=scope, p=period_phrase, quel=quel)


def _cite(series_id: str) -> str:
    return f" ({series_id})"


def _decline_text(language: str, reason: str, series: Series) -> str:
    reason_text = _DECLINE_REASONS[reason][language].format(x=series.names[language])
    return _DECLINE_OPENINGS[language] + reason_text
