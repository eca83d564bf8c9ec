"""scoring.llm's response caches (a plain mapping, SqliteCache, broken and
thread-bound caches) and its Python provider (CallableLLM, as_llm), with
usage counted across threads. Some go through the local provider server of
tests/provider_servers.py; the fixtures are in this folder's conftest."""

import json
import sqlite3
import threading
from collections.abc import MutableMapping
from concurrent.futures import ThreadPoolExecutor

import pytest

from scoring.llm import (
    CacheError,
    CallableLLM,
    LLMError,
    SqliteCache,
    TransientError,
    as_llm,
    check_cache_threads,
)
from tests.provider_servers import (
    closed_port_url,
    openai_completion,
)
from tests.scoring.llm.helpers import (
    COMPLETIONS,
    PROMPT,
    PROVIDERS,
    SYSTEM,
    TOKENS,
    make_model,
)

# The response cache.


@pytest.mark.parametrize("provider", PROVIDERS)
def test_it_answers_a_repeated_request_from_the_cache(server, provider):
    model = make_model(provider, server.url, cache={})
    server.add(COMPLETIONS[provider]())

    first = model.complete(PROMPT, system=SYSTEM)
    second = model.complete(PROMPT, system=SYSTEM)

    assert (first.text, first.cached) == ("a verdict", False)
    assert (second.text, second.cached) == ("a verdict", True)
    assert len(server.requests) == 1
    assert model.usage.as_dict() == {
        "responses": 2,
        "cached_responses": 1,
        "prompt_tokens": TOKENS[provider][0],
        "completion_tokens": TOKENS[provider][1],
        "retries": 0,
    }


def test_it_keys_the_cache_on_system_options_base_url_and_token_limit(server):
    def key(url=server.url, system=SYSTEM, **kwargs):
        return make_model("openai", url, **kwargs).cache_key(PROMPT, system)

    same = key()
    assert key() == same
    assert key(system="Reply in YAML.") != same
    assert key(system=None) != same
    assert key(options={"temperature": 0}) != same
    assert key(url=closed_port_url()) != same
    assert key(max_tokens=10) != same
    # Only the options' names reach the key, not the values of secret headers.
    assert key(options={"extra_headers": {"X-Key": "a"}}) == key(options={"extra_headers": {"X-Key": "b"}})


def test_it_asks_again_when_the_system_prompt_differs(server):
    model = make_model("openai", server.url, cache={})
    server.add(openai_completion("one"), openai_completion("two"))

    assert model.complete(PROMPT, system=SYSTEM).text == "one"
    assert model.complete(PROMPT, system="Reply in YAML.").text == "two"
    assert len(server.requests) == 2


def counting_model(cache=None):
    calls = []

    def judge(prompt, system):
        calls.append((prompt, system))
        return f"verdict on {prompt}"

    return CallableLLM(judge, cache=cache), calls


def test_it_shares_a_sqlite_cache_between_threads_and_keeps_it_when_reopened(tmp_path):
    path = tmp_path / "responses.sqlite"
    cache = SqliteCache(path)
    check_cache_threads(cache)
    model, calls = counting_model(cache)
    prompts = [f"prompt {n}" for n in range(20)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        texts = list(pool.map(model.complete, prompts))
    assert [text.text for text in texts] == [f"verdict on {prompt}" for prompt in prompts]
    assert len(calls) == 20
    assert len(cache) == 20
    cache.close()

    reopened = SqliteCache(path)
    again, again_calls = counting_model(reopened)
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(again.complete, prompts))
    assert all(answer.cached for answer in answers)
    assert again_calls == []
    assert again.usage.cached_responses == 20
    reopened.close()


class BrokenCache(dict):
    def __init__(self, fails_on):
        super().__init__()
        self.fails_on = fails_on

    def get(self, key, default=None):
        if self.fails_on == "read":
            raise OSError("disk gone")
        return super().get(key, default)

    def __setitem__(self, key, value):
        if self.fails_on == "write":
            raise OSError("disk full")
        super().__setitem__(key, value)


@pytest.mark.parametrize(
    ("fails_on", "message"),
    [
        ("read", "the response cache could not be read: disk gone"),
        ("write", "the response cache could not be written: disk full"),
    ],
)
def test_it_raises_cache_error_not_llm_error_for_a_broken_cache(fails_on, message):
    model, _ = counting_model(BrokenCache(fails_on))
    with pytest.raises(CacheError) as raised:
        model.complete(PROMPT)
    assert str(raised.value) == message
    assert not isinstance(raised.value, LLMError)


def test_it_raises_cache_error_for_an_entry_that_is_not_a_completion():
    model, _ = counting_model({})
    model.cache[model.cache_key(PROMPT, None)] = {"verdict": "yes"}
    with pytest.raises(CacheError):
        model.complete(PROMPT)


class ThreadBoundCache(MutableMapping):
    """A mapping on a SQLite connection that only its own thread may use, like shelve on Python 3.13."""

    def __init__(self):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("create table entries (key text primary key, value text)")

    def __getitem__(self, key):
        row = self.db.execute("select value from entries where key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return json.loads(row[0])

    def __setitem__(self, key, value):
        self.db.execute("insert or replace into entries values (?, ?)", (key, json.dumps(value)))

    def __delitem__(self, key):
        self.db.execute("delete from entries where key = ?", (key,))

    def __iter__(self):
        return iter([row[0] for row in self.db.execute("select key from entries")])

    def __len__(self):
        return self.db.execute("select count(*) from entries").fetchone()[0]


def test_it_refuses_a_cache_bound_to_the_thread_that_opened_it(tmp_path):
    with pytest.raises(CacheError) as raised:
        check_cache_threads(ThreadBoundCache())
    assert str(raised.value).startswith(
        "this cache (ThreadBoundCache) works only in the thread that opened it, so it cannot be used with "
        "several threads: use one thread, or a SqliteCache ("
    )
    check_cache_threads({})
    check_cache_threads(None)
    cache = SqliteCache(tmp_path / "ok.sqlite")
    check_cache_threads(cache)
    cache.close()


# Any callable is a model.


def test_it_makes_a_model_of_a_callable_and_counts_its_responses():
    calls = []

    def judge(prompt, system):
        calls.append((prompt, system))
        return "yes"

    model = as_llm(judge)

    assert isinstance(model, CallableLLM)
    assert as_llm(model) is model
    assert model.complete(PROMPT, system=SYSTEM).text == "yes"
    assert model.complete(PROMPT).text == "yes"
    assert calls == [(PROMPT, SYSTEM), (PROMPT, None)]
    assert model.usage.as_dict() == {
        "responses": 2,
        "cached_responses": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "retries": 0,
    }
    with pytest.raises(TypeError):
        as_llm("gpt-4o")


def test_it_retries_a_callable_that_fails_for_a_moment():
    failures = iter([TransientError("busy"), None])

    def judge(prompt, system):
        failure = next(failures)
        if failure:
            raise failure
        return "yes"

    model = CallableLLM(judge, retries=1, backoff_s=0.01)
    assert model.complete(PROMPT).text == "yes"
    assert model.usage.retries == 1
    with pytest.raises(ValueError):
        CallableLLM(judge, retries=-1)


def test_it_keeps_threads_apart_when_counting_usage():
    model, _ = counting_model()
    threads = [threading.Thread(target=lambda: [model.complete(PROMPT) for _ in range(50)]) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert model.usage.responses == 400
