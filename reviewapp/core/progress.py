"""Live progress of long tasks, shared through the cache.

A task that writes inside one long transaction cannot show its progress in
the rows it is writing (nobody else sees them before the commit), so it
reports here and the page reads it back.
"""

import logging

from django.core.cache import cache

logger = logging.getLogger(__name__)

_TIMEOUT = 60 * 60


def _key(kind: str, object_id: int) -> str:
    return f"progress:{kind}:{object_id}"


def report(kind: str, object_id: int, *, percent: int) -> None:
    """Best effort: progress is a courtesy, and a cache outage must not stop the work."""
    try:
        cache.set(_key(kind, object_id), max(0, min(100, int(percent))), _TIMEOUT)
    except Exception:
        logger.warning("could not report progress of %s %s", kind, object_id, exc_info=True)


def read(kind: str, object_id: int, *, default: int = 0) -> int:
    try:
        value = cache.get(_key(kind, object_id))
    except Exception:
        logger.warning("could not read progress of %s %s", kind, object_id, exc_info=True)
        return default
    return default if value is None else value
