"""Issue 31, point 1: a judge version cannot send the worker's secrets or
reach addresses an administrator has not allowed; the checks hold when a
version is saved, when a worker makes its model, and on every redirect."""

import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import pytest
from django.test import override_settings

from reviewapp.judges import endpoints
from reviewapp.judges.services.judge_versions import judge_version_errors, llm_for
from reviewapp.models import Judge, JudgeVersion
from scoring.llm import LLMError

pytestmark = pytest.mark.django_db

PROVIDERS_ONLY = {
    "JUDGE_BASE_URLS": ["https://api.openai.com", "https://api.anthropic.com"],
    "JUDGE_PRIVATE_ADDRESSES": False,
    "JUDGE_KEY_VARIABLES": ["*_API_KEY"],
}


def errors(**fields) -> dict:
    values = {
        "provider": "openai",
        "model": "m",
        "base_url": "",
        "options": {},
        "key_variable": "",
        "metrics": ["answer_relevance"],
        "rubric_version": None,
    }
    return judge_version_errors(**{**values, **fields})


@override_settings(**PROVIDERS_ONLY)
@pytest.mark.parametrize(
    "variable",
    [
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "REVIEWAPP_S3_SECRET_KEY",
        "AWS_SECRET_ACCESS_KEY",
    ],
)
def test_the_apps_own_settings_are_never_a_judges_key(variable):
    assert "a setting of the app itself" in errors(key_variable=variable)["key_variable"]


@override_settings(**PROVIDERS_ONLY)
def test_a_key_variable_outside_the_allowed_names_is_refused_and_the_providers_pass():
    assert "not among the variables an administrator allows" in errors(key_variable="HOME")["key_variable"]
    assert "key_variable" not in errors(key_variable="OPENAI_API_KEY")
    assert "key_variable" not in errors(key_variable="TEAM_JUDGE_API_KEY")
    with override_settings(JUDGE_KEY_VARIABLES=["TEAM_*"]):
        assert "key_variable" not in errors(key_variable="TEAM_SECRET")
        assert "a setting of the app itself" in errors(key_variable="DJANGO_SECRET_KEY")["key_variable"]


@override_settings(**PROVIDERS_ONLY)
@pytest.mark.parametrize(
    ("base_url", "says"),
    [
        ("https://listener.example.net/v1", "not among the addresses an administrator allows"),
        ("http://api.openai.com/v1", "not among the addresses"),  # the scheme counts
        ("ftp://api.openai.com", "starts with http:// or https://"),
        ("https://api.openai.com.evil.example/v1", "not among the addresses"),
    ],
)
def test_a_base_url_off_the_list_is_refused_with_a_sentence(base_url, says):
    assert says in errors(base_url=base_url)["base_url"]


@override_settings(**PROVIDERS_ONLY)
def test_the_providers_own_apis_pass():
    assert "base_url" not in errors(base_url="https://api.openai.com/v1")
    assert "base_url" not in errors(provider="anthropic", base_url="https://api.anthropic.com")


@pytest.mark.parametrize("host", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "[::1]", "localhost"])
def test_private_loopback_and_link_local_addresses_are_refused_unless_allowed(host):
    url = f"http://{host}:8000/v1"
    with override_settings(JUDGE_BASE_URLS=[f"http://{host}"], JUDGE_PRIVATE_ADDRESSES=False):
        assert "private, loopback or link-local" in errors(base_url=url)["base_url"]
    with override_settings(JUDGE_BASE_URLS=[f"http://{host}"], JUDGE_PRIVATE_ADDRESSES=True):
        assert "base_url" not in errors(base_url=url)


def _version(**fields) -> JudgeVersion:
    judge, _ = Judge.objects.get_or_create(name="saved before the rules")
    values = {
        "provider": "openai",
        "model": "m",
        "metrics": ["answer_relevance"],
        "number": judge.versions.count() + 1,
        "prompt_version": "1",
    }
    return JudgeVersion.objects.create(judge=judge, **{**values, **fields})


def test_a_version_saved_before_the_rules_cannot_make_its_model(monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.setenv("DJANGO_SECRET_KEY", "the-real-secret")
    version = _version(key_variable="DJANGO_SECRET_KEY", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(LLMError, match="a setting of the app itself"):
        llm_for(version)
    with override_settings(**PROVIDERS_ONLY):
        monkeypatch.setenv("TEAM_JUDGE_API_KEY", "sk-team")
        listener = _version(key_variable="TEAM_JUDGE_API_KEY", base_url="https://listener.example.net/v1")
        with pytest.raises(LLMError, match="not among the addresses"):
            llm_for(listener)


class _Redirecting(BaseHTTPRequestHandler):
    """An allowed server that sends every call on to an address off the list."""

    seen: list[str] = []

    def do_POST(self):
        self.seen.append(self.path)
        self.send_response(307)
        self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_redirect_off_the_list_is_not_followed():
    pytest.importorskip("openai")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        os.environ["LOCAL_REDIRECT_API_KEY"] = "sk-redirect"
        with override_settings(JUDGE_BASE_URLS=["http://127.0.0.1"], JUDGE_PRIVATE_ADDRESSES=True):
            refused = []
            original = endpoints.base_url_error

            def spying(url):
                reason = original(url)
                if reason:
                    refused.append(url)
                return reason

            version = _version(
                key_variable="LOCAL_REDIRECT_API_KEY", base_url=f"http://127.0.0.1:{server.server_port}/v1"
            )
            model = llm_for(version, retries=0)
            endpoints.base_url_error = spying
            try:
                with pytest.raises(Exception):  # noqa: B017 (the SDK's connection error)
                    model.complete("grade this")
            finally:
                endpoints.base_url_error = original
        assert _Redirecting.seen == ["/v1/chat/completions"]
        assert refused == ["http://169.254.169.254/latest/meta-data/"]
    finally:
        os.environ.pop("LOCAL_REDIRECT_API_KEY", None)
        server.shutdown()


@override_settings(**PROVIDERS_ONLY)
def test_the_judge_page_says_each_refusal_whole_beside_its_field(client):
    from django.urls import reverse

    from tests.app.judges.test_views import judge_form
    from tests.helpers import make_user

    client.force_login(make_user("lead"))
    response = client.post(
        reverse("judge-new"),
        judge_form(
            name="sneaky",
            provider="openai",
            model="gpt-x",
            base_url="https://listener.example.net/v1",
            key_variable="DJANGO_SECRET_KEY",
            metrics=["answer_relevance"],
        ),
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert (
        "https://listener.example.net is not among the addresses an administrator allows judges to call "
        "(https://api.openai.com, https://api.anthropic.com, set in REVIEWAPP_JUDGE_BASE_URLS)"
    ) in page
    assert "DJANGO_SECRET_KEY holds a setting of the app itself" in page
    assert not Judge.objects.filter(name="sneaky").exists()
