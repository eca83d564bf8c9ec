"""Making a model: ``make_llm(provider, model, ...)`` and ``llm_from_spec("provider:model")``.

A provider's SDK is imported here, when a model is made (by
scoring.llm.provider's ``_import_sdk``), never when scoring.llm is imported.
Keys come from the environment (or a client the caller built); nothing is
sent that was not asked for: options go to the provider as given.
"""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping

from scoring.llm.anthropic import AnthropicLLM, _default_anthropic_client
from scoring.llm.base import DEFAULT_BACKOFF_S, DEFAULT_RETRIES, LLM, LLMError
from scoring.llm.google import GeminiLLM, _default_gemini_client
from scoring.llm.openai import OpenAILLM, _default_openai_client
from scoring.llm.provider import DEFAULT_TIMEOUT_S, PROVIDERS, _check_limits, _import_sdk

_DEFAULT_CLIENTS: dict[str, Callable] = {
    "openai": _default_openai_client,
    "anthropic": _default_anthropic_client,
    "gemini": _default_gemini_client,
}
_CLASSES = {"openai": OpenAILLM, "anthropic": AnthropicLLM, "gemini": GeminiLLM}


def make_llm(
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
    timeout_s: float | None = None,
    key_variable: str | None = None,
    request_hook=None,
) -> LLM:
    """A model of ``provider`` ("openai", "anthropic", "gemini") named ``model``.

    The provider's SDK is imported here. ``timeout_s`` bounds each request
    (600 s when not given). Refuses (ValueError) an unknown provider,
    Anthropic without max_tokens, and an option the client's call does not
    take; raises LLMError, in one sentence, when the SDK is not installed or
    no key is set.
    """
    return make(
        provider,
        model,
        client=client,
        cache=cache,
        max_tokens=max_tokens,
        options=options,
        base_url=base_url,
        retries=retries,
        backoff_s=backoff_s,
        key_variable=key_variable,
        request_hook=request_hook,
        **({} if timeout_s is None else {"timeout_s": timeout_s}),
    )


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
    request_hook=None,
) -> LLM:
    """A model of ``provider`` named ``model``, with the SDK's client built here unless ``client`` is given.

    ``key_variable`` names the environment variable that holds the key when
    it is not the provider's default one (a team with a key per judge).

    ``base_url`` points the default client at another endpoint (for OpenAI,
    any server speaking its API); ``timeout_s`` bounds each request.
    ``request_hook`` is called with every HTTP request the OpenAI or
    Anthropic client sends, redirects included, and may refuse it by raising.
    Refuses (ValueError) an unknown provider, both ``client`` and ``base_url``,
    a token limit or timeout that is not positive, Anthropic without
    ``max_tokens``, and an option the client's call does not take. Raises
    LLMError, in one sentence, when the SDK is not installed or no key is set.
    """
    if provider not in PROVIDERS:
        raise ValueError(f'the provider is one of {", ".join(PROVIDERS)}, not "{provider}"')
    if client is not None and base_url is not None:
        raise ValueError("give base_url or client, not both: a client carries its own base URL")
    if request_hook is not None and (client is not None or provider == "gemini"):
        raise ValueError("a request hook goes on the OpenAI or Anthropic client made here")
    _check_limits(provider, max_tokens, timeout_s)
    sdk = _import_sdk(provider)
    if client is None:
        api_key = None
        if key_variable:
            api_key = os.environ.get(key_variable)
            if not api_key:
                raise LLMError(f"the {provider} judge's key is read from {key_variable}, which is not set")
        hook = {"request_hook": request_hook} if request_hook else {}
        client = _DEFAULT_CLIENTS[provider](sdk, base_url, timeout_s, api_key, **hook)
    return _CLASSES[provider](
        model,
        client,
        max_tokens=max_tokens,
        options=options,
        cache=cache,
        retries=retries,
        backoff_s=backoff_s,
        timeout_s=timeout_s,
    )


def llm_from_spec(spec: str, **kwargs) -> LLM:
    """A model from ``provider:model`` as the command lines take it.

    ``provider:model@URL`` sets the base URL (an OpenAI-compatible server:
    vLLM, Ollama, llama.cpp). Other keyword arguments go to make_llm.
    Refuses (ValueError) a spec without a provider or a model.
    """
    provider, colon, rest = spec.partition(":")
    model, at, url = rest.partition("@")
    if not colon or not provider or not model:
        raise ValueError(f'a judge is given as provider:model (such as openai:gpt-4o-mini), not "{spec}"')
    if at:
        kwargs["base_url"] = url
    return make_llm(provider, model, **kwargs)
