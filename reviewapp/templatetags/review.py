from django import template

from reviewapp.versions.selectors import CHART_LEFT, CHART_WIDTH
from scoring.repeats import one_attempt_sentence

register = template.Library()


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def logged_events(events) -> tuple[list, list[str]]:
    """(the events a run logged, as (name, event) pairs; the labels of those
    it logged for no answer): a table of events nobody captured says nothing
    a single line cannot."""
    items = list((events or {}).items())
    return [(n, e) for n, e in items if e["n"]], [e["label"] for _, e in items if not e["n"]]


@register.filter
def percent(value: float) -> str:
    """0.4365 as "43.6": one decimal, as the specs write rates, so that a
    narrow interval on a large run never reads "90 [90–90]"."""
    return f"{value * 100:.1f}"


@register.filter
def k_of_n(figure) -> str:
    """A rate's count as "17/200", and "17/200, effective n 61" when its
    units cluster (a question's attempts, an answer's numbers) and its
    interval was made on fewer independent draws than n. Takes a Rate or
    its dict (as the gate's answer holds it)."""
    said = effective_n(figure)
    return f"{counted(figure)}, {said}" if said else counted(figure)


@register.filter
def counted(figure) -> str:
    """A rate's count alone, "17/200" (for a table that gives its effective
    n on a line of its own, to stay narrow)."""
    return f"{_field(figure, 'k')}/{_field(figure, 'n')}"


@register.filter
def effective_n(figure) -> str:
    """ "effective n 61" when the rate's units cluster, else ""."""
    value = _field(figure, "effective_n")
    return f"effective n {value:.0f}" if value is not None else ""


def _field(figure, name: str):
    return figure.get(name) if isinstance(figure, dict) else getattr(figure, name, None)


@register.filter
def number(value) -> str:
    """41.0 as 41, 7.6 as 7.6."""
    from scoring.measures import format_value

    try:
        return format_value(float(value))
    except (TypeError, ValueError):
        return str(value)


@register.filter
def points(value: float) -> str:
    """A difference of shares as signed points: 0.072 as "+7.2"."""
    return f"{value * 100:+.1f}"


@register.filter
def p_value(value: float) -> str:
    """A p-value as people can read it: "p = 0.581", and "p < 0.001" below
    that, never "p = 0.000", which reads as impossible."""
    return "p < 0.001" if value < 0.0005 else f"p = {value:.3f}"


@register.filter
def points_abs(value: float) -> str:
    return f"{value * 100:.0f}"


@register.filter
def split(value: str, separator: str) -> list[str]:
    return value.split(separator)


@register.filter
def tick_x(tick: str) -> float:
    return CHART_LEFT + float(tick) / 100 * CHART_WIDTH


@register.filter
def row_y(counter: int) -> int:
    return 30 + 22 * counter


@register.filter
def measure_label(measure: str) -> str:
    from scoring.measures import MEASURE_LABELS

    return MEASURE_LABELS[measure]


@register.filter
def measure_denominator(measure: str) -> str:
    from scoring.measures import DENOMINATORS

    return DENOMINATORS[measure]


@register.filter
def sub(value: float, other: float) -> float:
    """value − other, for widths in SVG charts."""
    return float(value) - float(other)


@register.simple_tag
def one_attempt(figures: str = "", who: str = "") -> str:
    """scoring.repeats.one_attempt_sentence, for templates/one_attempt_note.html."""
    return one_attempt_sentence(figures=figures or "these figures", who=who or "")
