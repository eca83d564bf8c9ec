"""The providers behind make_llm: OpenAI (and any server speaking its API), Anthropic and Gemini.

Each SDK is imported by ``make``, never when this module is imported, so the
scoring library works without any of them. Keys come from the SDK's own
environment variables or from a client the caller built; they are kept out of
identities, cache keys and error messages. The SDKs' own retries are turned
off: retries are ``LLM``'s, counted and bounded, so a rate limit is retried
``retries`` times and not ``retries`` times the SDK's.
"""

from __future__ import annotations

import email.utils
import inspect
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, MutableMapping

from scoring.llm import (
    DEFAULT_BACKOFF_S,
    DEFAULT_RETRIES,
    LLM,
    PROVIDERS,
    REDACTED,
    SECRET_OPTIONS,
    Completion,
    IncompleteCompletionError,
    LLMError,
    TransientError,
)

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

OPENAI_INCOMPLETE = frozenset({"length", "content_filter"})
ANTHROPIC_INCOMPLETE = frozenset({"max_tokens", "refusal", "model_context_window_exceeded", "pause_turn"})
# Gemini's list of reasons keeps growing (SAFETY, RECITATION, BLOCKLIST, SPII,
# PROHIBITED_CONTENT, LANGUAGE, MALFORMED_RESPONSE...): every one but STOP
# means the text is not the model's finished answer.
GEMINI_COMPLETE = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED"})

# Error details longer than this are cut: a sentence, not a server's dump.
MAX_DETAIL_CHARS = 300
# Shorter "secrets" would blank out ordinary words in error messages.
MIN_SECRET_CHARS = 6


def make(
    provider: str,
    model: str,
    *,
    client=None,
    cache: MutableMapping | None = None,
    max_tokens: int | None = None,
    options: dict | None = None,
    base_url: str | None = None,
    retries: int = DEFAULT_RETRIES,
    backoff_s: float = DEFAULT_BACKOFF_S,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    key_variable: str | None = None,
) -> LLM:
    """A model of ``provider`` named ``model``, with the SDK's client built here unless ``client`` is given.

    ``key_variable`` names the environment variable that holds the key when
    it is not the provider's default one (a team with a key per judge).

    ``base_url`` points the default client at another endpoint (for OpenAI,
    any server speaking its API); ``timeout_s`` bounds each request.
    Refuses (ValueError) an unknown provider, both ``client`` and ``base_url``,
    a token limit or timeout that is not positive, Anthropic without
    ``max_tokens``, and an option the client's call does not take. Raises
    LLMError, in one sentence, when the SDK is not installed or no key is set.
    """
    if provider not in PROVIDERS:
        raise ValueError(f'the provider is one of {", ".join(PROVIDERS)}, not "{provider}"')
    if client is not None and base_url is not None:
        raise ValueError("give base_url or client, not both: a client carries its own base URL")
    _check_limits(provider, max_tokens, timeout_s)
    sdk = _import_sdk(provider)
    if client is None:
        api_key = None
        if key_variable:
            api_key = os.environ.get(key_variable)
            if not api_key:
                raise LLMError(f"the {provider} judge's key is read from {key_variable}, which is not set")
        client = _DEFAULT_CLIENTS[provider](sdk, base_url, timeout_s, api_key)
    classes = {"openai": OpenAILLM, "anthropic": AnthropicLLM, "gemini": GeminiLLM}
    return classes[provider](
        model,
        client,
        max_tokens=max_tokens,
        options=options,
        cache=cache,
        retries=retries,
        backoff_s=backoff_s,
        timeout_s=timeout_s,
    )


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


def _missing_key(provider: str) -> LLMError:
    hint = " (any value will do for a local server that takes none)" if provider == "openai" else ""
    return LLMError(
        f"the {provider} provider needs an API key: set {KEY_VARIABLES[provider]} in the environment{hint}, "
        "or pass client="
    )


def _default_openai_client(sdk, base_url: str | None, timeout_s: float, api_key: str | None = None):
    try:
        return sdk.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)
    except sdk.OpenAIError as error:
        if not os.environ.get("OPENAI_API_KEY"):
            raise _missing_key("openai") from None
        raise LLMError(f"the openai client could not be made: {_one_line(str(error))}") from None


def _default_anthropic_client(sdk, base_url: str | None, timeout_s: float, api_key: str | None = None):
    try:
        client = sdk.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)
    except (sdk.AnthropicError, ValueError, TypeError) as error:
        raise LLMError(f"the anthropic client could not be made: {_one_line(str(error))}") from None
    # The SDK defers a missing key to the first request; say so now, once.
    if not (client.api_key or client.auth_token or getattr(client, "credentials", None)):
        raise _missing_key("anthropic")
    return client


def _default_gemini_client(sdk, base_url: str | None, timeout_s: float, api_key: str | None = None):
    from google.genai import types

    http_options = types.HttpOptions(
        base_url=base_url, timeout=_milliseconds(timeout_s), retry_options=types.HttpRetryOptions(attempts=1)
    )
    try:
        return sdk.Client(api_key=api_key, http_options=http_options)
    except ValueError as error:
        if not (os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")):
            raise _missing_key("gemini") from None
        raise LLMError(f"the gemini client could not be made: {_one_line(str(error))}") from None


_DEFAULT_CLIENTS: dict[str, Callable] = {
    "openai": _default_openai_client,
    "anthropic": _default_anthropic_client,
    "gemini": _default_gemini_client,
}


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


class OpenAILLM(ProviderLLM):
    """A chat model through the OpenAI SDK: OpenAI itself or any server speaking its API (vLLM, Ollama...)."""

    provider = "openai"
    call_name = "chat.completions.create"

    def __init__(self, model: str, client, **kwargs):
        super().__init__(model, client, **kwargs)
        self.client = _without_sdk_retries(client)
        reserved = {
            "model": "it is the model argument",
            "messages": "the prompt and system prompt make the messages",
            "stream": "a verdict is read whole, not streamed",
            "timeout": "give timeout_s instead",
        }
        if self.max_tokens is not None:
            reserved["max_completion_tokens"] = "the token limit is given once, as max_tokens"
            reserved["max_tokens"] = "the token limit is given once, as max_tokens"
        taken = self._check_call_options(self.client.chat.completions.create, reserved)
        self._send_timeout = not taken or "timeout" in taken

    def _send(self, prompt: str, system: str | None) -> Completion:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        request = {**self.options, "model": self.model, "messages": messages}
        if self.max_tokens is not None:
            request["max_completion_tokens"] = self.max_tokens
        if self._send_timeout:
            request["timeout"] = self.timeout_s
        response = self._call(self.client.chat.completions.create, request)
        try:
            choice = response.choices[0]
            finish_reason = choice.finish_reason
            text = choice.message.content or ""
            refusal = getattr(choice.message, "refusal", None)
        except (AttributeError, IndexError, TypeError):
            raise self._no_completion() from None
        if finish_reason in OPENAI_INCOMPLETE:
            raise IncompleteCompletionError(finish_reason, text)
        if refusal:
            raise IncompleteCompletionError("refusal", refusal)
        usage = getattr(response, "usage", None)
        return Completion(
            text,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            finish_reason=finish_reason,
        )

    def _translate(self, error: Exception) -> LLMError | None:
        sdk = self._sdk
        if isinstance(error, sdk.APITimeoutError):
            return self._timed_out()
        if isinstance(error, sdk.APIConnectionError):
            return self._unreachable(error)
        if isinstance(error, sdk.APIStatusError):
            # The SDK keeps the body's "error" object; its message is the server's sentence.
            body = error.body
            detail = body.get("message") if isinstance(body, dict) else None
            return self._status_error(
                error.status_code, _one_line(str(detail or error.message)), error.response.headers
            )
        if isinstance(error, _response_error_types(sdk)):
            return self._unreadable(error)
        return None


class AnthropicLLM(ProviderLLM):
    """A Claude model through the Anthropic SDK's Messages API (max_tokens required)."""

    provider = "anthropic"
    call_name = "messages.create"

    def __init__(self, model: str, client, **kwargs):
        super().__init__(model, client, **kwargs)
        self.client = _without_sdk_retries(client)
        reserved = {
            "model": "it is the model argument",
            "messages": "the prompt makes the messages",
            "system": "the system prompt is given to complete(system=...)",
            "max_tokens": "the token limit is given as max_tokens",
            "stream": "a verdict is read whole, not streamed",
            "timeout": "give timeout_s instead",
        }
        taken = self._check_call_options(self.client.messages.create, reserved)
        # Without an explicit timeout the SDK refuses a large max_tokens unstreamed.
        self._send_timeout = not taken or "timeout" in taken

    def _send(self, prompt: str, system: str | None) -> Completion:
        request = {
            **self.options,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [{"role": "user", "content": prompt}],
        }
        if system:
            request["system"] = system
        if self._send_timeout:
            request["timeout"] = self.timeout_s
        response = self._call(self.client.messages.create, request)
        try:
            stop_reason = response.stop_reason
            text = "".join(block.text for block in response.content if getattr(block, "type", None) == "text")
        except (AttributeError, TypeError):
            raise self._no_completion() from None
        if stop_reason in ANTHROPIC_INCOMPLETE:
            raise IncompleteCompletionError(stop_reason, text)
        usage = getattr(response, "usage", None)
        return Completion(
            text,
            prompt_tokens=getattr(usage, "input_tokens", None),
            completion_tokens=getattr(usage, "output_tokens", None),
            finish_reason=stop_reason,
        )

    def _translate(self, error: Exception) -> LLMError | None:
        sdk = self._sdk
        if isinstance(error, sdk.APITimeoutError):
            return self._timed_out()
        if isinstance(error, sdk.APIConnectionError):
            return self._unreachable(error)
        if isinstance(error, sdk.APIStatusError):
            detail = getattr(error, "api_message", None) or error.message
            return self._status_error(error.status_code, _one_line(str(detail)), error.response.headers)
        if isinstance(error, _response_error_types(sdk)):
            return self._unreadable(error)
        return None


class GeminiLLM(ProviderLLM):
    """A Gemini model through the google-genai SDK's generate_content."""

    provider = "gemini"
    call_name = "GenerateContentConfig"

    def __init__(self, model: str, client, **kwargs):
        super().__init__(model, client, **kwargs)
        from google.genai import types

        self._types = types
        reserved = {
            "system_instruction": "the system prompt is given to complete(system=...)",
            "http_options": "give headers as extra_headers and the timeout as timeout_s",
        }
        if self.max_tokens is not None:
            reserved["max_output_tokens"] = "the token limit is given once, as max_tokens"
        _refuse_reserved(self.provider, self.options, reserved)
        config_options = {name: value for name, value in self.options.items() if name != "extra_headers"}
        unknown = sorted(set(config_options) - set(types.GenerateContentConfig.model_fields))
        if unknown:
            raise ValueError(
                f"the gemini client's GenerateContentConfig does not take {', '.join(unknown)}: "
                "options are passed to it as they are"
            )
        if self.max_tokens is not None:
            config_options["max_output_tokens"] = self.max_tokens
        # Per request, so a client the caller built keeps its own retries off and our timeout.
        config_options["http_options"] = types.HttpOptions(
            timeout=_milliseconds(self.timeout_s),
            headers=dict(self.options["extra_headers"]) if self.options.get("extra_headers") else None,
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._config_options = config_options
        # Built now so a wrong value is refused when the model is made, not on every call.
        types.GenerateContentConfig(**config_options)

    def _client_base_url(self, client) -> str | None:
        # genai keeps the base URL private; without it the identity has none.
        http_options = getattr(getattr(client, "_api_client", None), "_http_options", None)
        url = getattr(http_options, "base_url", None)
        return url if isinstance(url, str) else None

    def _client_secrets(self, client) -> list:
        return [getattr(getattr(client, "_api_client", None), "api_key", None)]

    def _send(self, prompt: str, system: str | None) -> Completion:
        config = dict(self._config_options)
        if system:
            config["system_instruction"] = system
        request = {
            "model": self.model,
            "contents": prompt,
            "config": self._types.GenerateContentConfig(**config),
        }
        response = self._call(self.client.models.generate_content, request)
        block_reason = getattr(getattr(response, "prompt_feedback", None), "block_reason", None)
        if block_reason:
            raise IncompleteCompletionError(f"prompt blocked: {_enum_value(block_reason)}")
        try:
            candidate = response.candidates[0]
            finish_reason = _enum_value(candidate.finish_reason)
            parts = (candidate.content.parts if candidate.content else None) or []
            # Thought parts are the model's reasoning, not its answer.
            text = "".join(part.text for part in parts if part.text and not part.thought)
        except (AttributeError, IndexError, TypeError):
            raise self._no_completion() from None
        if finish_reason is not None and finish_reason not in GEMINI_COMPLETE:
            raise IncompleteCompletionError(finish_reason, text)
        usage = getattr(response, "usage_metadata", None)
        return Completion(
            text,
            prompt_tokens=getattr(usage, "prompt_token_count", None),
            completion_tokens=getattr(usage, "candidates_token_count", None),
            finish_reason=finish_reason,
        )

    def _translate(self, error: Exception) -> LLMError | None:
        from google.genai import errors

        if isinstance(error, errors.APIError):
            detail = error.message or str(error)
            headers = getattr(getattr(error, "response", None), "headers", None)
            return self._status_error(error.code, _one_line(str(detail)), headers)
        timeouts, network = _network_error_types()
        if isinstance(error, timeouts):
            return self._timed_out()
        if isinstance(error, network):
            return self._unreachable(error)
        if isinstance(error, (errors.UnknownApiResponseError, *_response_error_types(self._sdk))):
            return self._unreadable(error)
        return None


def _network_error_types() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeouts, other network failures) of the HTTP libraries genai may use: those already imported.

    genai sends through httpx2, or httpx, or requests (with Google auth); a
    library never imported cannot have raised.
    """
    timeouts: list[type[BaseException]] = []
    network: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        library = sys.modules.get(name)
        if library is not None:
            timeouts.append(library.TimeoutException)
            network.extend([library.NetworkError, library.RemoteProtocolError])
    requests = sys.modules.get("requests")
    if requests is not None:
        timeouts.append(requests.exceptions.Timeout)
        network.append(requests.exceptions.ConnectionError)
    return tuple(timeouts), tuple(network)


def _enum_value(value) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))
