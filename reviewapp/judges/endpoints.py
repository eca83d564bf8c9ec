"""Where a judge may send its calls and which secret it may send with them.

A judge version names a base URL and the environment variable holding its
key, and a worker sends that variable's value to that URL. Left open, a
lead could point a judge at a listener of their own and name
``DJANGO_SECRET_KEY`` as its key, or have the worker call an internal
address. So both are checked against what an administrator allows, when a
version is saved and again when a worker makes its model (settings change,
and names resolve to other addresses over time):

- a key variable must match one of ``JUDGE_KEY_VARIABLES`` (names or
  shell patterns; ``*_API_KEY`` by default) and never names the app's own
  settings (``DJANGO_*``, ``DATABASE_*``, ``CELERY_*``, ``REVIEWAPP_*``,
  ``AWS_*``, ``PG*``, ``REDIS_*``, whatever the patterns say);
- a base URL must start with one of ``JUDGE_BASE_URLS`` (the providers' own
  APIs by default; an entry without a port allows any port), and its host
  must not resolve to a private, loopback, link-local or otherwise special
  address unless ``JUDGE_PRIVATE_ADDRESSES`` is on. Every request the SDK
  sends, redirects included, passes the same check (``guard``), so a
  redirect cannot take a call off the list.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import logging
import socket
from urllib.parse import urlsplit

from django.conf import settings

logger = logging.getLogger(__name__)

# Settings of the app itself: never a judge's key, whatever the patterns allow.
NEVER_KEYS = ("DJANGO_*", "DATABASE_*", "CELERY_*", "REVIEWAPP_*", "AWS_*", "PG*", "REDIS_*", "SECRET_*")


class EndpointRefused(Exception):
    """A judge's call to an address the administrator has not allowed."""


def key_variable_error(name: str) -> str:
    """Why ``name`` may not hold a judge's key; empty when it may."""
    if not name:
        return ""
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in NEVER_KEYS):
        return (
            f"{name} holds a setting of the app itself, never a judge's key: "
            "name the variable that holds the provider's key"
        )
    allowed = settings.JUDGE_KEY_VARIABLES
    if not any(fnmatch.fnmatchcase(name, pattern) for pattern in allowed):
        return (
            f"{name} is not among the variables an administrator allows for judges' keys "
            f"({', '.join(allowed)}, set in REVIEWAPP_JUDGE_KEY_VARIABLES)"
        )
    return ""


def _matches(url, entry: str) -> bool:
    allowed = urlsplit(entry)
    if (url.scheme, url.hostname) != (allowed.scheme, allowed.hostname):
        return False
    if allowed.port is not None and url.port != allowed.port:
        return False
    prefix = allowed.path.rstrip("/")
    return not prefix or url.path == prefix or url.path.startswith(prefix + "/")


def _special_addresses(host: str) -> list[str]:
    """The addresses ``host`` resolves to that are not public; unresolvable
    hosts are left to the call, which fails with the SDK's own error."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return []
    found = []
    for *_, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
        if not address.is_global:
            found.append(str(address))
    return sorted(set(found))


def base_url_error(base_url: str) -> str:
    """Why a judge may not call ``base_url``; empty when it may."""
    if not base_url:
        return ""
    try:
        url = urlsplit(base_url)
        url.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        return f"{base_url} is not a URL"
    if url.scheme not in ("http", "https") or not url.hostname:
        return "a base URL starts with http:// or https:// and names a host"
    allowed = settings.JUDGE_BASE_URLS
    if not any(_matches(url, entry) for entry in allowed):
        return (
            f"{url.scheme}://{url.netloc} is not among the addresses an administrator allows judges to "
            f"call ({', '.join(allowed)}, set in REVIEWAPP_JUDGE_BASE_URLS)"
        )
    if not settings.JUDGE_PRIVATE_ADDRESSES and (special := _special_addresses(url.hostname)):
        return (
            f"{url.hostname} is a private, loopback or link-local address ({', '.join(special)}), and "
            "judges call such addresses only where an administrator allows it "
            "(REVIEWAPP_JUDGE_PRIVATE_ADDRESSES)"
        )
    return ""


def guard(request) -> None:
    """An httpx request hook: refuse every request, first or redirected, off
    the list. The SDK reports the refusal as a connection error, so the
    reason is logged here."""
    if reason := base_url_error(str(request.url)):
        logger.warning("a judge's request was refused: %s", reason)
        raise EndpointRefused(reason)
