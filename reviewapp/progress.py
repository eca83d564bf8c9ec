"""Live progress of long tasks, shared through the cache.

A task that writes inside one long transaction cannot show its progress in
the rows it is writing (nobody else sees them before the commit), so it
reports here and the page reads it back.
"""

from django.core.cache import cache

_TIMEOUT = 60 * 60


def _key(kind: str, object_id: int) -> str:
    return f"progress:{kind}:{object_id}"


def report(kind: str, object_id: int, *, percent: int) -> None:
    cache.set(_key(kind, object_id), max(0, min(100, int(percent))), _TIMEOUT)


def read(kind: str, object_id: int, *, default: int = 0) -> int:
    value = cache.get(_key(kind, object_id))
    return default if value is None else value
