"""The Anthropic provider: a Claude model through the Anthropic SDK's Messages
API (max_tokens required). The SDK is imported when a model is made
(scoring.llm.provider), not with this module."""

from __future__ import annotations

from scoring.llm.base import Completion, IncompleteCompletionError, LLMError
from scoring.llm.provider import (
    ProviderLLM,
    _http_client,
    _missing_key,
    _one_line,
    _response_error_types,
    _without_sdk_retries,
)

ANTHROPIC_INCOMPLETE = frozenset({"max_tokens", "refusal", "model_context_window_exceeded", "pause_turn"})


def _default_anthropic_client(
    sdk, base_url: str | None, timeout_s: float, api_key: str | None = None, request_hook=None
):
    try:
        client = sdk.Anthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=_http_client(sdk, request_hook),
        )
    except (sdk.AnthropicError, ValueError, TypeError) as error:
        raise LLMError(f"the anthropic client could not be made: {_one_line(str(error))}") from None
    # The SDK defers a missing key to the first request; say so now, once.
    if not (client.api_key or client.auth_token or getattr(client, "credentials", None)):
        raise _missing_key("anthropic")
    return client


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
