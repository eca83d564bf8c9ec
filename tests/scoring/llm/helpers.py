"""What the provider tests share: the models, keys and prompts they use, and
make_model, which points a model of make_llm at the local provider server."""

from scoring.llm import make_llm
from tests.provider_servers import anthropic_message, gemini_response, openai_completion

PROVIDERS = ("openai", "anthropic", "gemini")
MODELS = {"openai": "gpt-test", "anthropic": "claude-test", "gemini": "gemini-test"}
PATHS = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "gemini": "/v1/models/gemini-test:generateContent",
}
COMPLETIONS = {"openai": openai_completion, "anthropic": anthropic_message, "gemini": gemini_response}
# Tokens the scripted completions report, as (prompt, completion).
TOKENS = {"openai": (11, 3), "anthropic": (13, 4), "gemini": (17, 5)}

# Distinctive, so a leak anywhere is found by a plain substring search.
KEYS = {
    "openai": "sk-test-OPENAI-key-4f9a2c71",
    "anthropic": "sk-ant-test-ANTHROPIC-key-7b1e",
    "gemini": "test-GEMINI-key-c3d8e0",
}
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}

PROMPT = "Is the answer supported?"
SYSTEM = "Reply with JSON."


def base_url(provider: str, url: str) -> str:
    # The OpenAI SDK takes the URL up to /v1; the others add their own version.
    return f"{url}/v1" if provider == "openai" else url


def make_model(provider: str, url: str, **kwargs):
    kwargs.setdefault("retries", 0)
    kwargs.setdefault("backoff_s", 0.01)
    if provider == "anthropic":
        kwargs.setdefault("max_tokens", 64)
    return make_llm(provider, MODELS[provider], base_url=base_url(provider, url), **kwargs)


def user_content(provider: str, text: str) -> dict:
    if provider == "gemini":
        return {"parts": [{"text": text}], "role": "user"}
    return {"role": "user", "content": text}
