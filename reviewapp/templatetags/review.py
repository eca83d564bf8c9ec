from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def percent(value: float) -> str:
    """0.4365 as "44 %": intervals read at a glance."""
    return f"{value * 100:.0f}"


@register.filter
def number(value) -> str:
    """41.0 as 41, 7.6 as 7.6."""
    from scoring.measures import format_value

    try:
        return format_value(float(value))
    except (TypeError, ValueError):
        return str(value)
