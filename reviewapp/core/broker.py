"""What the sweep learns from the Redis broker, so that lost work moves again
in seconds rather than when its message is WORK_STALE_SECONDS old:

- a marker key that Redis loses with its messages: when the sweep finds it
  gone, Redis restarted empty (or was flushed), and every piece of work
  waiting for a worker is sent again at once (a message that arrives twice
  is a no-op: every task claims its work first);
- the sweep's heartbeat, a key that expires after a few sweep intervals:
  each worker looks for it every interval and runs the sweep itself when it
  is missing, so that work is picked up with Celery beat down, and the run
  page says when nothing has swept for a while.

Best effort throughout: with another broker (or none, as in the embedded
setup, where tasks run in-process) or Redis unreachable, the answers are
"nothing known" and the sweep's slow path still holds.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings

logger = logging.getLogger(__name__)

MARKER_KEY = "reviewapp:broker-marker"
HEARTBEAT_KEY = "reviewapp:sweep-heartbeat"
# Missed sweeps before the heartbeat counts as gone.
_HEARTBEAT_SWEEPS = 2


def _client():
    url = settings.CELERY_BROKER_URL or ""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    import redis

    # Short timeouts: the run page asks on every poll.
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)


def messages_lost() -> bool:
    """Whether the broker lost its keys (restarted empty, or flushed) since
    the last sweep that finished; also True on the very first sweep ever."""
    try:
        client = _client()
        return bool(client and not client.exists(MARKER_KEY))
    except Exception as error:
        logger.warning("could not read the broker's marker: %s", error)
        return False


def messages_resent() -> None:
    """Called once a sweep sent again what was waiting: set the marker."""
    try:
        if client := _client():
            client.set(MARKER_KEY, str(time.time()))
    except Exception as error:
        logger.warning("could not set the broker's marker: %s", error)


def heartbeat() -> None:
    """Called by every sweep: this installation was swept just now."""
    try:
        if client := _client():
            client.set(HEARTBEAT_KEY, str(time.time()), ex=heartbeat_seconds())
    except Exception as error:
        logger.warning("could not record the sweep's heartbeat: %s", error)


def swept_recently() -> bool | None:
    """Whether a sweep ran within the last few intervals; None when the broker
    cannot tell (not Redis, or unreachable)."""
    try:
        client = _client()
        return None if client is None else bool(client.exists(HEARTBEAT_KEY))
    except Exception:
        return None


def heartbeat_seconds() -> int:
    """How long a sweep counts as recent: two sweep intervals."""
    return max(2, _HEARTBEAT_SWEEPS * settings.WORK_SWEEP_SECONDS)


def keep_swept(send_sweep, stop: threading.Event | None = None) -> threading.Thread:
    """In a worker: every sweep interval, from now on, send the sweep when no
    sweep has run lately (beat down, or never started). A thread of the
    worker's main process; it touches Redis only, never the database, so
    that the pool processes it forks share no connection with it."""

    stop = stop or threading.Event()

    def watch() -> None:
        while not stop.is_set():
            if swept_recently() is False:
                try:
                    send_sweep()
                except Exception as error:
                    logger.warning("could not send the sweep: %s", error)
            stop.wait(settings.WORK_SWEEP_SECONDS)

    thread = threading.Thread(target=watch, name="sweep-watch", daemon=True)
    thread.start()
    return thread
