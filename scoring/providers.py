"""The providers behind make_llm: moved to the scoring.llm package (one module
per provider: scoring.llm.openai, .anthropic, .google; what they share in
scoring.llm.provider; ``make`` in scoring.llm.make).

Kept so that ``scoring.providers`` goes on importing; new code imports
scoring.llm. Importing it imports no SDK."""

from scoring.llm.anthropic import ANTHROPIC_INCOMPLETE, AnthropicLLM
from scoring.llm.google import GEMINI_COMPLETE, GeminiLLM
from scoring.llm.make import make
from scoring.llm.openai import OPENAI_INCOMPLETE, OpenAILLM
from scoring.llm.provider import (
    DEFAULT_TIMEOUT_S,
    KEY_VARIABLES,
    MAX_DETAIL_CHARS,
    MIN_SECRET_CHARS,
    PACKAGES,
    RETRIED_STATUSES,
    ProviderLLM,
)

__all__ = [
    "ANTHROPIC_INCOMPLETE",
    "DEFAULT_TIMEOUT_S",
    "GEMINI_COMPLETE",
    "KEY_VARIABLES",
    "MAX_DETAIL_CHARS",
    "MIN_SECRET_CHARS",
    "OPENAI_INCOMPLETE",
    "PACKAGES",
    "RETRIED_STATUSES",
    "AnthropicLLM",
    "GeminiLLM",
    "OpenAILLM",
    "ProviderLLM",
    "make",
]
