"""The OpenAI provider: a chat model through the OpenAI SDK, OpenAI itself or
any server speaking its API (vLLM, Ollama, llama.cpp). The SDK is imported
when a model is made (scoring.llm.provider), not with this module."""

from __future__ import annotations

import os

from scoring.llm.base import Completion, IncompleteCompletionError, LLMError
from scoring.llm.provider import (
    ProviderLLM,
    _http_client,
    _missing_key,
    _one_line,
    _response_error_types,
    _without_sdk_retries,
)

OPENAI_INCOMPLETE = frozenset({"length", "content_filter"})


def _default_openai_client(
    sdk, base_url: str | None, timeout_s: float, api_key: str | None = None, request_hook=None
):
    try:
        return sdk.OpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=_http_client(sdk, request_hook),
        )
    except sdk.OpenAIError as error:
        if not os.environ.get("OPENAI_API_KEY"):
            raise _missing_key("openai") from None
        raise LLMError(f"the openai client could not be made: {_one_line(str(error))}") from None


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
