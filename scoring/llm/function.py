"""The Python provider: any function ``fn(prompt, system) -> str`` as a model
(a local model, a gateway, a test double, the stand-in judge), and as_llm,
which takes either such a function or a model already made."""

from __future__ import annotations

from collections.abc import Callable

from scoring.llm.base import LLM, Completion, LLMError


class CallableLLM(LLM):
    """Any ``fn(prompt, system) -> str`` as a model: a local model, a gateway, a test double."""

    provider = "callable"

    def __init__(self, fn: Callable[[str, str | None], str], **kwargs):
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        super().__init__(kwargs.pop("model", None) or name, **kwargs)
        self.fn = fn

    def _send(self, prompt: str, system: str | None) -> Completion:
        text = self.fn(prompt, system)
        if not isinstance(text, str):
            raise LLMError(f"the model {self.model} returned {type(text).__name__}, not text")
        return Completion(text)


def as_llm(model) -> LLM:
    """``model`` as an LLM: an LLM as it is, a callable wrapped."""
    if isinstance(model, LLM):
        return model
    if callable(model):
        return CallableLLM(model)
    raise TypeError(f"a model is an LLM from make_llm or a callable fn(prompt, system) -> str, not {model!r}")
