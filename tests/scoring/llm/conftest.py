"""Fixtures of the scoring.llm tests: only the test keys in the environment, and
a local server that speaks the OpenAI, Anthropic and Gemini wire formats."""

import os

import pytest

from tests.provider_servers import ProviderServer
from tests.scoring.llm.helpers import KEY_VARIABLES, KEYS


@pytest.fixture(autouse=True)
def provider_environment(monkeypatch, tmp_path):
    """Only the test keys: no real keys, profiles, Vertex settings or proxies from the machine."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_")) or name.lower().endswith(
            "_proxy"
        ):
            monkeypatch.delenv(name)
    # Anthropic's SDK looks for credential profiles under the home directory.
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for provider, variable in KEY_VARIABLES.items():
        monkeypatch.setenv(variable, KEYS[provider])


@pytest.fixture
def server():
    with ProviderServer() as running:
        yield running
