import os
import shutil
import tempfile
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1] / "reviewapp" / "demo"


def pytest_configure(config):
    from django.conf import settings

    # Hashing test passwords slowly buys nothing.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # django-axes refuses authenticate() without a request, as self.client.login
    # calls it; the login-throttling tests turn it back on (tests/app/core/test_security.py).
    settings.AXES_ENABLED = False
    # Tasks run in-process unless a test starts a real worker; class-level
    # fixtures run before any per-test fixture could say so.
    from reviewapp.celery import app

    app.conf.task_always_eager = True
    # The suite's local provider servers listen on 127.0.0.1 (tests/provider_servers.py).
    settings.JUDGE_BASE_URLS = ["http://127.0.0.1"]
    settings.JUDGE_PRIVATE_ADDRESSES = True
    # Data written outside a test (class-level fixtures) stays out of the project.
    settings.DATA_DIR = Path(tempfile.mkdtemp(prefix="reviewapp-tests-"))


@pytest.fixture(autouse=True)
def _isolated_data_dir(request, tmp_path):
    """App tests store uploads in their own folder and run tasks in-process,
    unless they ask for a real worker. Scoring tests need no Django at all."""
    if request.module.__name__.startswith("tests.scoring."):
        yield
        return
    settings = request.getfixturevalue("settings")
    from reviewapp.celery import app

    settings.DATA_DIR = tmp_path / "data"
    settings.MEDIA_ROOT = tmp_path / "data" / "media"
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = eager


@pytest.fixture
def example_dir() -> Path:
    return SHARED_DATA


CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def browser(monkeypatch):
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser tests: install chromium (bin/test does as root)")
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    # The live server runs Django in a thread beside Playwright's event loop.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()
        # Connections the test opened while Playwright's loop ran live in that
        # loop's context, out of reach of the test case's own clean-up: close
        # them here, or a later test may be handed one the server has dropped.
        from django.db import connections

        connections.close_all()
