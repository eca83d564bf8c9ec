"""What the SDK providers (OpenAI, Anthropic, Gemini) share: the token limit
and timeout checks, importing the SDK when a model is made, the client's
base URL and secrets, and every SDK failure turned into one sentence
(TransientError when worth retrying).

Each SDK is imported when a model is made, never when this module is
imported, so the scoring library works without any of them. Keys come from
the SDK's own environment variables or from a client the caller built; they
are kept out of identities, cache keys and error messages. The SDKs' own
retries are turned off: retries are ``LLM``'s, counted and bounded, so a rate
limit is retried ``retries`` times and not ``retries`` times the SDK's.

Names starting with an underscore are shared by the provider modules of
scoring.llm only.
"""

from __future__ import annotations

import email.utils
import inspect
import json
import sys
import time
from collections.abc import Callable, Mapping, MutableMapping

from scoring.llm.base import (
    DEFAULT_BACKOFF_S,
    DEFAULT_RETRIES,
    LLM,
    REDACTED,
    SECRET_OPTIONS,
    LLMError,
    TransientError,
)

PROVIDERS = ("openai", "anthropic", "gemini")

DEFAULT_TIMEOUT_S = 600.0

# Statuses worth another try: request timeout, conflict (a lock timeout at
# OpenAI), rate limit; every 5xx is too (529 is Anthropic's "overloaded").
RETRIED_STATUSES = frozenset({408, 409, 429})

# The package to install for each provider, as pip names it.
PACKAGES = {"openai": "openai", "anthropic": "anthropic", "gemini": "google-genai"}

KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY or GOOGLE_API_KEY",
}

# Error details longer than this are cut: a sentence, not a server's dump.
MAX_DETAIL_CHARS = 300

# Shorter "secrets" would blank out ordinary words in error messages.
MIN_SECRET_CHARS = 6


def _check_limits(provider: str, max_tokens: int | None, timeout_s: float) -> None:
    if provider == "anthropic" and max_tokens is None:
        raise ValueError("Anthropic's Messages API requires max_tokens: make the model with max_tokens=...")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)):
        raise ValueError(f"max_tokens is a whole number of tokens, not {max_tokens!r}")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens is at least 1, not {max_tokens}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s is a number of seconds above 0, not {timeout_s!r}")


def _import_sdk(provider: str):
    """The SDK module of ``provider``; LLMError naming the pip command when it is missing."""
    try:
        if provider == "openai":
            import openai as sdk
        elif provider == "anthropic":
            import anthropic as sdk
        else:
            import google.genai as sdk
    except ImportError as error:
        package = PACKAGES[provider]
        raise LLMError(
            f"the {provider} provider needs the {package} package: pip install {package}"
        ) from error
    return sdk


def _http_client(sdk, request_hook):
    """The SDK's own HTTP client with ``request_hook`` called on every request
    it sends, redirects included (a caller's check of where calls go); None,
    the SDK's default, without a hook."""
    if request_hook is None:
        return None
    return sdk.DefaultHttpxClient(event_hooks={"request": [request_hook]})


def _missing_key(provider: str) -> LLMError:
    hint = " (any value will do for a local server that takes none)" if provider == "openai" else ""
    return LLMError(
        f"the {provider} provider needs an API key: set {KEY_VARIABLES[provider]} in the environment{hint}, "
        "or pass client="
    )


def _milliseconds(seconds: float) -> int:
    return max(1, round(seconds * 1000))


class ProviderLLM(LLM):
    """What the three providers share: a client, a token limit, a timeout, and errors in one sentence."""

    provider = "provider"
    # The call whose signature options are checked against, for messages.
    call_name = ""

    def __init__(
        self,
        model: str,
        client,
        *,
        max_tokens: int | None = None,
        options: dict | None = None,
        cache: MutableMapping | None = None,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ):
        _check_limits(self.provider, max_tokens, timeout_s)
        super().__init__(
            model,
            options=options,
            base_url=self._client_base_url(client),
            cache=cache,
            retries=retries,
            backoff_s=backoff_s,
        )
        self._sdk = _import_sdk(self.provider)
        self.client = client
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self._secrets = sorted(
            {
                secret
                for secret in [*self._client_secrets(client), *_option_secrets(self.options)]
                if isinstance(secret, str) and len(secret) >= MIN_SECRET_CHARS
            },
            key=len,
            reverse=True,
        )

    def identity(self) -> dict:
        """Provider, model, options (secrets redacted), base URL and token limit: never a key."""
        return dict(super().identity(), max_tokens=self.max_tokens)

    def _client_base_url(self, client) -> str | None:
        url = getattr(client, "base_url", None)
        return str(url) if url is not None else None

    def _client_secrets(self, client) -> list:
        return [getattr(client, "api_key", None), getattr(client, "auth_token", None)]

    def _call(self, method: Callable, request: dict):
        """``method(**request)``; the SDK's failures become LLMError (TransientError when worth retrying)."""
        try:
            return method(**request)
        except LLMError:
            raise
        except Exception as error:
            translated = self._translate(error)
            if translated is None:
                raise
            raise translated from error

    def _translate(self, error: Exception) -> LLMError | None:
        raise NotImplementedError

    def _status_error(self, status: int | None, detail: str, headers=None) -> LLMError:
        detail = self._scrub(detail)
        if status == 429:
            return TransientError(
                f"{self.provider} is limiting the rate of requests (429): {detail}",
                retry_after_s=_retry_after_s(headers),
            )
        if status in RETRIED_STATUSES or (status or 0) >= 500:
            return TransientError(
                f"{self.provider} failed to answer ({status}): {detail}",
                retry_after_s=_retry_after_s(headers),
            )
        return LLMError(f"{self.provider} refused the request ({status}): {detail}")

    def _timed_out(self) -> TransientError:
        return TransientError(f"{self.provider} did not answer within {self.timeout_s:g} s")

    def _unreachable(self, error: BaseException) -> TransientError:
        return TransientError(
            f"{self.provider} could not be reached at {self.base_url}: {self._scrub(_cause(error))}"
        )

    def _unreadable(self, error: BaseException) -> LLMError:
        return LLMError(
            f"{self.provider} sent a response that could not be read: {self._scrub(_one_line(str(error)))}"
        )

    def _no_completion(self) -> LLMError:
        return LLMError(f"{self.provider} sent a response without a completion")

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def _check_call_options(self, method: Callable, reserved: Mapping[str, str]) -> set[str]:
        """The parameter names ``method`` takes (empty when it takes any); ValueError for a refused option."""
        _refuse_reserved(self.provider, self.options, reserved)
        try:
            parameters = inspect.signature(method).parameters
        except (TypeError, ValueError):
            # A client without a readable signature: nothing to check against.
            return set()
        if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()):
            return set()
        unknown = sorted(set(self.options) - set(parameters))
        if unknown:
            raise ValueError(
                f"the {self.provider} client's {self.call_name} does not take {', '.join(unknown)}: "
                "options are passed to it as they are"
            )
        return set(parameters)


def _refuse_reserved(provider: str, options: dict, reserved: Mapping[str, str]) -> None:
    for name in options:
        if name in reserved:
            raise ValueError(
                f'options["{name}"] cannot be given to the {provider} provider: {reserved[name]}'
            )


def _option_secrets(options: dict) -> list:
    secrets = []
    for name in SECRET_OPTIONS:
        if isinstance(options.get(name), Mapping):
            secrets.extend(str(value) for value in options[name].values())
    return secrets


def _without_sdk_retries(client):
    """``client`` with the SDK's own retries off: a copy, so the caller's client is untouched."""
    if getattr(client, "max_retries", 0) and callable(getattr(client, "with_options", None)):
        return client.with_options(max_retries=0)
    return client


def _one_line(text: str) -> str:
    line = " ".join(text.split()).rstrip(".")
    if len(line) > MAX_DETAIL_CHARS:
        line = line[: MAX_DETAIL_CHARS - 3].rstrip() + "..."
    return line or "no detail given"


def _cause(error: BaseException) -> str:
    """The innermost cause of a connection failure ("[Errno 111] Connection refused"), on one line."""
    seen = error
    # Bounded: a chain that loops back on itself would never end.
    for _ in range(20):
        inner = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
        if inner is None:
            break
        seen = inner
    return _one_line(str(seen) or type(seen).__name__)


def _retry_after_s(headers) -> float | None:
    """Seconds the server asked to wait (retry-after-ms, Retry-After in seconds or as a date), or None."""
    if headers is None:
        return None
    try:
        milliseconds = headers.get("retry-after-ms")
        value = headers.get("retry-after")
    except AttributeError:
        return None
    try:
        if milliseconds is not None:
            return max(0.0, float(milliseconds) / 1000)
        if value is not None:
            return max(0.0, float(value))
    except ValueError:
        pass
    if value is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _response_error_types(sdk) -> tuple[type[BaseException], ...]:
    """Exceptions meaning the response itself could not be read (malformed JSON, a shape the SDK rejects)."""
    types: list[type[BaseException]] = [json.JSONDecodeError]
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None:
        types.append(pydantic.ValidationError)
    validation = getattr(sdk, "APIResponseValidationError", None)
    if validation is not None:
        types.append(validation)
    return tuple(types)
