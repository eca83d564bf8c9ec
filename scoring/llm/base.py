"""The interface every model has: ``LLM.complete(prompt, system=...)``, what it
returns (Completion), what it counts (Usage) and how it fails (LLMError and
its kinds, CacheError).

Spec 003's rules kept here: a key is never part of an identity, a cache key
or a report, and the values of ``options["extra_headers"]`` and
``options["extra_query"]`` are shown as ``<redacted>``; a completion that
stopped early raises IncompleteCompletionError; rate limits and transient
failures are retried with backoff, a bounded number of times; a response
cache (any mutable mapping) is keyed on provider, model, options, base URL,
system prompt and prompt, and a broken cache raises CacheError, never
mistaken for a model failure; token usage is counted per response, cached
responses apart.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections.abc import Callable, MutableMapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field

REDACTED = "<redacted>"

# Option keys whose values carry credentials at gateways and on Azure.
SECRET_OPTIONS = ("extra_headers", "extra_query")

DEFAULT_RETRIES = 4

DEFAULT_BACKOFF_S = 1.0

MAX_BACKOFF_S = 30.0


class LLMError(Exception):
    """A model could not give a completion: one sentence saying why."""


class IncompleteCompletionError(LLMError):
    """The model stopped before finishing (token limit, content filter)."""

    def __init__(self, reason: str, text: str = ""):
        super().__init__(f"the completion stopped early ({reason}); a cut-off verdict is not a verdict")
        self.reason = reason
        self.text = text


class CacheError(Exception):
    """The response cache failed (not the model)."""


class TransientError(LLMError):
    """A failure worth retrying: a rate limit, a timeout, a server error.

    ``retry_after_s`` is how long the server asked to wait, when it said.
    """

    def __init__(self, message: str, *, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False
    finish_reason: str | None = None

    def __str__(self) -> str:
        return self.text

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Usage:
    """Responses and tokens a model used; tokens only of responses not cached."""

    responses: int = 0
    cached_responses: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, completion: Completion) -> None:
        with self._lock:
            self.responses += 1
            if completion.cached:
                self.cached_responses += 1
            else:
                self.prompt_tokens += completion.prompt_tokens or 0
                self.completion_tokens += completion.completion_tokens or 0

    def retried(self) -> None:
        with self._lock:
            self.retries += 1

    def as_dict(self) -> dict:
        return {
            "responses": self.responses,
            "cached_responses": self.cached_responses,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "retries": self.retries,
        }


def redacted_options(options: dict | None) -> dict:
    """``options`` with every value under extra_headers and extra_query replaced."""
    shown = dict(options or {})
    for name in SECRET_OPTIONS:
        if isinstance(shown.get(name), dict):
            shown[name] = {key: REDACTED for key in shown[name]}
    return shown


class LLM:
    """A model behind one call. Subclasses implement ``_send``."""

    provider = "callable"

    def __init__(
        self,
        model: str,
        *,
        options: dict | None = None,
        base_url: str | None = None,
        cache: MutableMapping | None = None,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
    ):
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries is a whole number from 0, not {retries!r}")
        self.model = model
        self.options = dict(options or {})
        self.base_url = base_url
        self.cache = cache
        self.retries = retries
        self.backoff_s = backoff_s
        self.usage = Usage()
        # Each call to the provider is made inside ``send_limit()``: a caller
        # that shares the provider's limit with other processes sets it (a
        # slot of a semaphore); retries wait outside it.
        self.send_limit: Callable[[], AbstractContextManager] = nullcontext

    # What identifies the model in reports and cache keys: never a key.
    def identity(self) -> dict:
        return {
            "provider": self.provider,
            "model": self.model,
            "options": redacted_options(self.options),
            "base_url": self.base_url,
        }

    def __repr__(self) -> str:
        shown = self.identity()
        name = type(self).__name__
        return f"{name}({shown['provider']!r}, {shown['model']!r}, options={shown['options']!r})"

    def cache_key(self, prompt: str, system: str | None) -> str:
        key = dict(self.identity(), system=system, prompt=prompt)
        return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()

    def complete(self, prompt: str, *, system: str | None = None) -> Completion:
        """The model's completion of ``prompt``, from the cache when it holds it.

        Raises IncompleteCompletionError for a completion that stopped early,
        LLMError when the model cannot be reached (after the retries), and
        CacheError when the cache fails.
        """
        key = self.cache_key(prompt, system) if self.cache is not None else None
        if key is not None:
            stored = _cache_get(self.cache, key)
            if stored is not None:
                completion = _cached_completion(stored)
                self.usage.add(completion)
                return completion
        completion = self._send_with_retries(prompt, system)
        if key is not None:
            _cache_set(self.cache, key, completion.as_dict())
        self.usage.add(completion)
        return completion

    def _send_with_retries(self, prompt: str, system: str | None) -> Completion:
        for attempt in range(self.retries + 1):
            try:
                with self.send_limit():
                    return self._send(prompt, system)
            except TransientError as error:
                if attempt == self.retries:
                    tries = "1 try" if attempt == 0 else f"{attempt + 1} tries"
                    raise LLMError(f"{error} (gave up after {tries})") from error
                self.usage.retried()
                # Jitter keeps several threads from retrying in step.
                wait = min(MAX_BACKOFF_S, self.backoff_s * 2**attempt) * random.uniform(0.5, 1.0)
                if error.retry_after_s is not None:
                    # Sooner than the server asked would only be refused again.
                    wait = max(wait, min(MAX_BACKOFF_S, error.retry_after_s))
                time.sleep(wait)
        raise AssertionError("unreachable")

    def _send(self, prompt: str, system: str | None) -> Completion:
        raise NotImplementedError


def _cached_completion(stored) -> Completion:
    """A completion read back from the cache; CacheError for an entry that is not one."""
    try:
        return Completion(**dict(stored, cached=True))
    except (TypeError, ValueError) as error:
        raise CacheError(f"the response cache holds an entry that is not a completion: {error}") from error


def _cache_get(cache: MutableMapping, key: str):
    try:
        return cache.get(key)
    except Exception as error:
        raise CacheError(f"the response cache could not be read: {error}") from error


def _cache_set(cache: MutableMapping, key: str, value: dict) -> None:
    try:
        cache[key] = value
    except Exception as error:
        raise CacheError(f"the response cache could not be written: {error}") from error


# About four characters a token in English text: close enough to say what a
# run will cost before it starts, and said to be an estimate wherever shown.
CHARACTERS_PER_TOKEN = 4


def estimate_tokens(*texts: str | None) -> int:
    """An estimate of the tokens in ``texts`` together (never below one a text)."""
    return sum(max(1, -(-len(text) // CHARACTERS_PER_TOKEN)) for text in texts if text)
