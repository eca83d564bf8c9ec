"""One call for every language model: ``make_llm(...).complete(prompt, system=...)``.

The package holds, each in its own module:

- base: the interface (LLM), what it returns and counts (Completion, Usage),
  how it fails (LLMError, IncompleteCompletionError, TransientError,
  CacheError), key redaction and the token estimate;
- cache: SqliteCache and the check for caches bound to one thread;
- function: the Python provider (CallableLLM, as_llm);
- provider: what the SDK providers share; openai, anthropic, google: one
  module per provider;
- make: make_llm and llm_from_spec, which pick the provider.

Spec 003's rules for connecting a model: a provider's SDK is imported when a
model is made, never when this package is imported; keys come from the
environment (or a client the caller built) and never go into an identity, a
cache key or a report; nothing is sent that was not asked for; a completion
that stopped early raises IncompleteCompletionError; rate limits and
transient failures are retried with backoff, a bounded number of times; a
broken cache raises CacheError, never mistaken for a model failure; token
usage is counted per response, cached responses apart.

Everything is imported from here as before (``from scoring.llm import make_llm``).
"""

from scoring.llm.base import (
    CHARACTERS_PER_TOKEN,
    DEFAULT_BACKOFF_S,
    DEFAULT_RETRIES,
    LLM,
    MAX_BACKOFF_S,
    REDACTED,
    SECRET_OPTIONS,
    CacheError,
    Completion,
    IncompleteCompletionError,
    LLMError,
    TransientError,
    Usage,
    estimate_tokens,
    redacted_options,
)
from scoring.llm.cache import SqliteCache, check_cache_threads
from scoring.llm.function import CallableLLM, as_llm
from scoring.llm.make import llm_from_spec, make_llm
from scoring.llm.provider import PROVIDERS

__all__ = [
    "CHARACTERS_PER_TOKEN",
    "DEFAULT_BACKOFF_S",
    "DEFAULT_RETRIES",
    "LLM",
    "MAX_BACKOFF_S",
    "PROVIDERS",
    "REDACTED",
    "SECRET_OPTIONS",
    "CacheError",
    "CallableLLM",
    "Completion",
    "IncompleteCompletionError",
    "LLMError",
    "SqliteCache",
    "TransientError",
    "Usage",
    "as_llm",
    "check_cache_threads",
    "estimate_tokens",
    "llm_from_spec",
    "make_llm",
    "redacted_options",
]
