import tempfile
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1] / "reviewapp" / "demo"


def pytest_configure(config):
    from django.conf import settings

    # Hashing test passwords slowly buys nothing.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Tasks run in-process unless a test starts a real worker; class-level
    # fixtures run before any per-test fixture could say so.
    from reviewapp.celery import app

    app.conf.task_always_eager = True
    # Data written outside a test (class-level fixtures) stays out of the project.
    settings.DATA_DIR = Path(tempfile.mkdtemp(prefix="reviewapp-tests-"))


@pytest.fixture(autouse=True)
def _isolated_data_dir(request, tmp_path):
    """App tests store uploads in their own folder and run tasks in-process,
    unless they ask for a real worker. Scoring tests need no Django at all."""
    if request.module.__name__.startswith("tests.test_scoring"):
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
