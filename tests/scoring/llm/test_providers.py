"""scoring.llm's providers (scoring.llm.openai, .anthropic, .google, made by
make_llm) against the real SDKs, pointed at a local server that speaks the
OpenAI, Anthropic and Gemini wire formats (tests/provider_servers.py). No
network and no Django database. The fixtures are in this folder's conftest."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scoring.llm import (
    REDACTED,
    IncompleteCompletionError,
    LLMError,
    TransientError,
    make_llm,
)
from scoring.llm.provider import _retry_after_s
from tests.provider_servers import (
    Reply,
    anthropic_message,
    closed_port_url,
    error_reply,
    gemini_response,
    malformed_reply,
    openai_completion,
)
from tests.scoring.llm.helpers import (
    COMPLETIONS,
    KEY_VARIABLES,
    KEYS,
    MODELS,
    PATHS,
    PROMPT,
    PROVIDERS,
    SYSTEM,
    TOKENS,
    base_url,
    make_model,
    user_content,
)

REPO = Path(__file__).resolve().parents[3]


# The SDKs are imported when a model is made, never with the library.


def test_it_imports_no_sdk_with_the_scoring_modules():
    probe = (
        "import sys, scoring.llm, scoring.llm.openai, scoring.llm.anthropic, scoring.llm.google; "
        "print([name for name in ('openai', 'anthropic', 'google.genai', 'httpx2', 'httpx') if name in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("provider", "module", "package"),
    [
        ("openai", "openai", "openai"),
        ("anthropic", "anthropic", "anthropic"),
        ("gemini", "google.genai", "google-genai"),
    ],
)
def test_it_names_the_pip_command_when_the_sdk_is_missing(monkeypatch, provider, module, package):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(LLMError) as raised:
        make_llm(provider, MODELS[provider], max_tokens=64)
    assert str(raised.value) == f"the {provider} provider needs the {package} package: pip install {package}"


# Keys come from the environment and go nowhere else.


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        (
            "openai",
            "the openai provider needs an API key: set OPENAI_API_KEY in the environment "
            "(any value will do for a local server that takes none), or pass client=",
        ),
        (
            "anthropic",
            "the anthropic provider needs an API key: set ANTHROPIC_API_KEY in the environment, or pass client=",
        ),
        (
            "gemini",
            "the gemini provider needs an API key: set GEMINI_API_KEY or GOOGLE_API_KEY in the environment, "
            "or pass client=",
        ),
    ],
)
def test_it_names_the_variable_when_no_key_is_set(monkeypatch, provider, message):
    monkeypatch.delenv(KEY_VARIABLES[provider])
    with pytest.raises(LLMError) as raised:
        make_llm(provider, MODELS[provider], max_tokens=64)
    assert str(raised.value) == message
    # Raised by us when the model is made, not a traceback from inside the SDK.
    assert raised.value.__cause__ is None
    assert raised.value.__context__ is None or raised.value.__suppress_context__


@pytest.mark.parametrize("provider", PROVIDERS)
def test_it_sends_the_key_but_keeps_it_out_of_identity_repr_cache_and_errors(server, provider):
    key = KEYS[provider]
    cache = {}
    model = make_model(provider, server.url, cache=cache)
    # A server that echoes the key back in its refusal, as some do.
    server.add(COMPLETIONS[provider](), error_reply(provider, 401, f"The key {key} is not valid."))

    model.complete(PROMPT, system=SYSTEM)
    model.complete(PROMPT, system=SYSTEM)
    with pytest.raises(LLMError) as raised:
        model.complete("Another prompt")

    assert any(key in value for value in server.requests[0].headers.values())
    assert str(raised.value) == f"{provider} refused the request (401): The key {REDACTED} is not valid"
    shown = [
        repr(model),
        json.dumps(model.identity()),
        json.dumps(list(cache)),
        json.dumps(list(cache.values())),
        json.dumps(model.usage.as_dict()),
        str(raised.value),
    ]
    for text in shown:
        assert key not in text


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_it_redacts_extra_headers_and_extra_query_but_sends_them(server, provider):
    options = {
        "extra_headers": {"X-Gateway-Key": "gw-SECRET-header-1"},
        "extra_query": {"sig": "q-SECRET-query-2"},
    }
    model = make_model(provider, server.url, options=options)
    server.add(COMPLETIONS[provider]())

    model.complete(PROMPT)

    assert model.identity()["options"] == {
        "extra_headers": {"X-Gateway-Key": REDACTED},
        "extra_query": {"sig": REDACTED},
    }
    assert "SECRET" not in repr(model)
    assert "SECRET" not in model.cache_key(PROMPT, None)
    request = server.requests[0]
    assert request.headers["x-gateway-key"] == "gw-SECRET-header-1"
    assert request.path == f"{PATHS[provider]}?sig=q-SECRET-query-2"


def test_it_redacts_and_sends_gemini_extra_headers_and_refuses_extra_query(server):
    model = make_model(
        "gemini", server.url, options={"extra_headers": {"X-Gateway-Key": "gw-SECRET-header-1"}}
    )
    server.add(gemini_response())

    model.complete(PROMPT)

    assert model.identity()["options"] == {"extra_headers": {"X-Gateway-Key": REDACTED}}
    assert "SECRET" not in repr(model)
    assert server.requests[0].headers["x-gateway-key"] == "gw-SECRET-header-1"
    # The headers go in the request's HTTP options, not its body.
    assert server.requests[0].body == {"contents": [user_content("gemini", PROMPT)], "generationConfig": {}}
    with pytest.raises(ValueError) as raised:
        make_model("gemini", server.url, options={"extra_query": {"sig": "q"}})
    assert str(raised.value) == (
        "the gemini client's GenerateContentConfig does not take extra_query: options are passed to it as they are"
    )


# Nothing is sent that was not asked for; max_tokens goes to each provider's own field.


@pytest.mark.parametrize(
    ("provider", "kwargs", "system", "body"),
    [
        ("openai", {}, None, {"model": "gpt-test", "messages": [user_content("openai", PROMPT)]}),
        (
            "openai",
            {"max_tokens": 50, "options": {"temperature": 0}},
            SYSTEM,
            {
                "model": "gpt-test",
                "messages": [{"role": "system", "content": SYSTEM}, user_content("openai", PROMPT)],
                "max_completion_tokens": 50,
                "temperature": 0,
            },
        ),
        (
            "anthropic",
            {},
            None,
            {"model": "claude-test", "max_tokens": 64, "messages": [user_content("anthropic", PROMPT)]},
        ),
        (
            "anthropic",
            {"max_tokens": 50, "options": {"stop_sequences": ["END"]}},
            SYSTEM,
            {
                "model": "claude-test",
                "max_tokens": 50,
                "messages": [user_content("anthropic", PROMPT)],
                "system": SYSTEM,
                "stop_sequences": ["END"],
            },
        ),
        # The SDK writes an empty generationConfig for any config; ours carries only the timeout.
        ("gemini", {}, None, {"contents": [user_content("gemini", PROMPT)], "generationConfig": {}}),
        (
            "gemini",
            {"max_tokens": 50, "options": {"temperature": 0}},
            SYSTEM,
            {
                "contents": [user_content("gemini", PROMPT)],
                "systemInstruction": {"parts": [{"text": SYSTEM}], "role": "user"},
                "generationConfig": {"maxOutputTokens": 50, "temperature": 0},
            },
        ),
    ],
)
def test_it_sends_only_what_was_asked(server, provider, kwargs, system, body):
    model = make_model(provider, server.url, **kwargs)
    server.add(COMPLETIONS[provider]())

    completion = model.complete(PROMPT, system=system)

    assert completion.text == "a verdict"
    assert [request.path for request in server.requests] == [PATHS[provider]]
    assert server.requests[0].body == body


@pytest.mark.parametrize(
    ("provider", "kwargs", "field", "value"),
    [
        ("openai", {"max_tokens": 50}, "max_completion_tokens", 50),
        # An older server that knows only max_tokens is given it through options.
        ("openai", {"options": {"max_tokens": 50}}, "max_tokens", 50),
        ("anthropic", {"max_tokens": 50}, "max_tokens", 50),
        ("gemini", {"max_tokens": 50}, "generationConfig", {"maxOutputTokens": 50}),
    ],
)
def test_it_sends_max_tokens_as_each_providers_field(server, provider, kwargs, field, value):
    model = make_model(provider, server.url, **kwargs)
    server.add(COMPLETIONS[provider]())

    model.complete(PROMPT)

    body = server.requests[0].body
    assert body[field] == value
    token_fields = {
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "maxOutputTokens",
        "generationConfig",
    }
    assert set(body) & token_fields == {field}


# Refused when the model is made.


@pytest.mark.parametrize(
    ("provider", "kwargs", "message"),
    [
        (
            "openai",
            {"options": {"top_k": 5}},
            "the openai client's chat.completions.create does not take top_k: options are passed to it as they are",
        ),
        (
            "anthropic",
            {"options": {"frequency_penalty": 1, "n": 2}},
            "the anthropic client's messages.create does not take frequency_penalty, n: "
            "options are passed to it as they are",
        ),
        (
            "gemini",
            {"options": {"max_completion_tokens": 5}},
            "the gemini client's GenerateContentConfig does not take max_completion_tokens: "
            "options are passed to it as they are",
        ),
        (
            "openai",
            {"max_tokens": 5, "options": {"max_completion_tokens": 5}},
            'options["max_completion_tokens"] cannot be given to the openai provider: '
            "the token limit is given once, as max_tokens",
        ),
        (
            "openai",
            {"options": {"timeout": 5}},
            'options["timeout"] cannot be given to the openai provider: give timeout_s instead',
        ),
        (
            "anthropic",
            {"options": {"system": "x"}},
            'options["system"] cannot be given to the anthropic provider: '
            "the system prompt is given to complete(system=...)",
        ),
        (
            "gemini",
            {"options": {"http_options": {}}},
            'options["http_options"] cannot be given to the gemini provider: '
            "give headers as extra_headers and the timeout as timeout_s",
        ),
        (
            "anthropic",
            {"max_tokens": None},
            "Anthropic's Messages API requires max_tokens: make the model with max_tokens=...",
        ),
        ("openai", {"max_tokens": 0}, "max_tokens is at least 1, not 0"),
        ("openai", {"timeout_s": 0}, "timeout_s is a number of seconds above 0, not 0"),
    ],
)
def test_it_refuses_what_the_call_cannot_take_when_the_model_is_made(server, provider, kwargs, message):
    with pytest.raises(ValueError) as raised:
        make_model(provider, server.url, **kwargs)
    assert str(raised.value) == message
    assert server.requests == []


def test_it_refuses_a_wrong_gemini_option_value_when_the_model_is_made(server):
    with pytest.raises(ValueError) as raised:
        make_model("gemini", server.url, options={"temperature": "warm"})
    assert "temperature" in str(raised.value)


def test_it_refuses_an_unknown_provider_and_a_client_with_a_base_url():
    with pytest.raises(ValueError) as raised:
        make_llm("mistral", "m")
    assert str(raised.value) == 'the provider is one of openai, anthropic, gemini, not "mistral"'
    with pytest.raises(ValueError) as raised:
        make_llm("openai", "m", client=object(), base_url="http://127.0.0.1:1/v1")
    assert str(raised.value) == "give base_url or client, not both: a client carries its own base URL"


# A completion that stopped early is not a verdict.


@pytest.mark.parametrize(
    ("provider", "reply", "reason"),
    [
        ("openai", openai_completion(finish_reason="length"), "length"),
        ("openai", openai_completion(finish_reason="content_filter"), "content_filter"),
        ("openai", openai_completion(refusal="I can't help with that."), "refusal"),
        ("anthropic", anthropic_message(stop_reason="max_tokens"), "max_tokens"),
        ("anthropic", anthropic_message(stop_reason="refusal"), "refusal"),
        ("gemini", gemini_response(finish_reason="MAX_TOKENS"), "MAX_TOKENS"),
        ("gemini", gemini_response(finish_reason="SAFETY"), "SAFETY"),
        ("gemini", gemini_response(finish_reason="RECITATION"), "RECITATION"),
        ("gemini", gemini_response(finish_reason="PROHIBITED_CONTENT"), "PROHIBITED_CONTENT"),
        ("gemini", gemini_response(finish_reason="BLOCKLIST"), "BLOCKLIST"),
        ("gemini", gemini_response(finish_reason="SPII"), "SPII"),
        ("gemini", gemini_response(block_reason="SAFETY"), "prompt blocked: SAFETY"),
    ],
)
def test_it_raises_incomplete_for_a_cut_off_or_filtered_completion(server, provider, reply, reason):
    cache = {}
    model = make_model(provider, server.url, cache=cache, retries=2)
    server.add(reply)

    with pytest.raises(IncompleteCompletionError) as raised:
        model.complete(PROMPT)

    assert raised.value.reason == reason
    assert str(raised.value) == f"the completion stopped early ({reason}); a cut-off verdict is not a verdict"
    # Neither retried nor cached nor counted as a response.
    assert len(server.requests) == 1
    assert cache == {}
    assert model.usage.responses == 0


def test_it_keeps_the_text_of_a_cut_off_completion(server):
    model = make_model("openai", server.url)
    server.add(openai_completion("half a verd", finish_reason="length"))
    with pytest.raises(IncompleteCompletionError) as raised:
        model.complete(PROMPT)
    assert raised.value.text == "half a verd"


# Rate limits and transient failures are retried, a bounded number of times.


@pytest.mark.parametrize(
    ("provider", "status"),
    [
        ("openai", 429),
        ("openai", 500),
        ("openai", 502),
        ("openai", 503),
        ("anthropic", 429),
        ("anthropic", 529),
        ("anthropic", 503),
        ("gemini", 429),
        ("gemini", 500),
        ("gemini", 503),
    ],
)
def test_it_retries_a_rate_limit_or_server_error_then_answers(server, provider, status):
    model = make_model(provider, server.url, retries=2)
    server.add(
        error_reply(provider, status, "Try again.", {"Retry-After": "0"}),
        error_reply(provider, status, "Try again."),
        COMPLETIONS[provider](),
    )

    completion = model.complete(PROMPT)

    assert completion.text == "a verdict"
    assert len(server.requests) == 3
    assert model.usage.as_dict() == {
        "responses": 1,
        "cached_responses": 0,
        "prompt_tokens": TOKENS[provider][0],
        "completion_tokens": TOKENS[provider][1],
        "retries": 2,
    }


@pytest.mark.parametrize(
    ("provider", "status", "message"),
    [
        ("openai", 503, "openai failed to answer (503): Service down (gave up after 3 tries)"),
        ("anthropic", 529, "anthropic failed to answer (529): Service down (gave up after 3 tries)"),
        (
            "gemini",
            429,
            "gemini is limiting the rate of requests (429): Service down (gave up after 3 tries)",
        ),
    ],
)
def test_it_gives_up_after_the_retries_in_one_sentence(server, provider, status, message):
    model = make_model(provider, server.url, retries=2)
    server.add(*[error_reply(provider, status, "Service down.")] * 3)

    with pytest.raises(LLMError) as raised:
        model.complete(PROMPT)

    assert str(raised.value) == message
    assert not isinstance(raised.value, TransientError)
    assert len(server.requests) == 3
    assert model.usage.retries == 2


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [400, 401])
def test_it_does_not_retry_a_refused_request(server, provider, status):
    model = make_model(provider, server.url, retries=3)
    server.add(error_reply(provider, status, "Bad request.\nSee the docs."))

    with pytest.raises(LLMError) as raised:
        model.complete(PROMPT)

    assert str(raised.value) == f"{provider} refused the request ({status}): Bad request. See the docs"
    assert len(server.requests) == 1
    assert model.usage.retries == 0


def test_it_waits_as_long_as_a_rate_limit_asks(server):
    model = make_model("openai", server.url, retries=1, backoff_s=0.01)
    server.add(error_reply("openai", 429, "Slow down.", {"retry-after-ms": "300"}), openai_completion())

    started = time.monotonic()
    model.complete(PROMPT)

    assert time.monotonic() - started >= 0.3
    assert len(server.requests) == 2


def test_it_reads_retry_after_in_seconds_and_as_a_date():
    assert _retry_after_s({"retry-after": "2"}) == 2.0
    assert _retry_after_s({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert _retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert _retry_after_s({"retry-after": "soon"}) is None
    assert _retry_after_s({}) is None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_it_retries_a_timeout_then_gives_up_in_one_sentence(server, provider):
    model = make_model(provider, server.url, retries=1, timeout_s=0.2)
    server.add(Reply(delay_s=5), Reply(delay_s=5))

    started = time.monotonic()
    with pytest.raises(LLMError) as raised:
        model.complete(PROMPT)

    assert str(raised.value) == f"{provider} did not answer within 0.2 s (gave up after 2 tries)"
    assert len(server.requests) == 2
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_it_reports_an_unreachable_endpoint_in_one_sentence(provider):
    url = closed_port_url()
    model = make_model(provider, url, retries=1, backoff_s=0.01)

    with pytest.raises(LLMError) as raised:
        model.complete(PROMPT)

    shown = model.identity()["base_url"]
    assert shown in (base_url(provider, url), base_url(provider, url) + "/")
    assert str(raised.value) == (
        f"{provider} could not be reached at {shown}: [Errno 111] Connection refused (gave up after 2 tries)"
    )
    assert model.usage.retries == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_it_reports_a_malformed_response_without_retrying(server, provider):
    model = make_model(provider, server.url, retries=2)
    server.add(malformed_reply())

    with pytest.raises(LLMError) as raised:
        model.complete(PROMPT)

    assert str(raised.value) == (
        f"{provider} sent a response that could not be read: Expecting value: line 1 column 14 (char 13)"
    )
    assert len(server.requests) == 1


@pytest.mark.parametrize(("provider", "body"), [("openai", {"id": "x"}), ("anthropic", {}), ("gemini", {})])
def test_it_reports_a_response_without_a_completion(server, provider, body):
    model = make_model(provider, server.url)
    server.add(Reply(body=body))
    with pytest.raises(LLMError) as raised:
        model.complete(PROMPT)
    assert str(raised.value) == f"{provider} sent a response without a completion"


# A client the caller built.


def test_it_takes_a_client_the_caller_built_and_turns_its_retries_off(server):
    import anthropic
    import openai
    from google import genai
    from google.genai import types

    clients = {
        "openai": openai.OpenAI(base_url=f"{server.url}/v1", api_key="client-key-openai-1", max_retries=5),
        "anthropic": anthropic.Anthropic(
            base_url=server.url, api_key="client-key-anthropic-2", max_retries=5
        ),
        "gemini": genai.Client(
            api_key="client-key-gemini-3",
            http_options=types.HttpOptions(
                base_url=server.url, retry_options=types.HttpRetryOptions(attempts=5)
            ),
        ),
    }
    for provider, client in clients.items():
        server.requests.clear()
        model = make_llm(provider, MODELS[provider], client=client, max_tokens=64, retries=0)
        server.add(error_reply(provider, 503, "Down."))

        with pytest.raises(LLMError):
            model.complete(PROMPT)

        assert len(server.requests) == 1, provider
        assert model.identity()["base_url"].rstrip("/") == base_url(provider, server.url)
        assert "client-key" not in repr(model) + json.dumps(model.identity())
    # The caller's own client is left as it was.
    assert clients["openai"].max_retries == 5
    assert clients["anthropic"].max_retries == 5


def test_it_takes_any_client_with_the_same_surface():
    seen = []

    class Completions:
        def create(self, **request):
            seen.append(request)
            message = type("Message", (), {"content": "ok", "refusal": None})
            choice = type("Choice", (), {"finish_reason": "stop", "message": message})
            return type("Response", (), {"choices": [choice], "usage": None})

    client = type("Client", (), {"chat": type("Chat", (), {"completions": Completions()})})()
    model = make_llm("openai", "local-model", client=client, options={"anything": 1})

    assert model.complete(PROMPT).text == "ok"
    assert seen == [
        {
            "anything": 1,
            "model": "local-model",
            "messages": [user_content("openai", PROMPT)],
            "timeout": 600.0,
        }
    ]
    assert model.identity()["base_url"] is None


def test_it_reads_the_key_from_the_variable_a_judge_names(server, monkeypatch):
    monkeypatch.setenv("TEAM_JUDGE_KEY", "sk-team-judge-key-123")
    server.add(openai_completion("fine"))
    model = make_model("openai", server.url, key_variable="TEAM_JUDGE_KEY")
    assert model.complete(PROMPT).text == "fine"
    assert server.requests[0].headers["authorization"] == "Bearer sk-team-judge-key-123"
    monkeypatch.delenv("TEAM_JUDGE_KEY")
    with pytest.raises(LLMError) as caught:
        make_model("openai", server.url, key_variable="TEAM_JUDGE_KEY")
    assert str(caught.value) == "the openai judge's key is read from TEAM_JUDGE_KEY, which is not set"
