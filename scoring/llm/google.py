"""The Gemini provider: a Gemini model through the google-genai SDK's
generate_content. The SDK is imported when a model is made
(scoring.llm.provider), not with this module."""

from __future__ import annotations

import os
import sys

from scoring.llm.base import Completion, IncompleteCompletionError, LLMError
from scoring.llm.provider import (
    ProviderLLM,
    _milliseconds,
    _missing_key,
    _one_line,
    _refuse_reserved,
    _response_error_types,
)

# Gemini's list of reasons keeps growing (SAFETY, RECITATION, BLOCKLIST, SPII,
# PROHIBITED_CONTENT, LANGUAGE, MALFORMED_RESPONSE...): every one but STOP
# means the text is not the model's finished answer.
GEMINI_COMPLETE = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED"})


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
