"""The real worker processes of tests/worker_processes.py, as fixtures."""

import os

import pytest
from django.db import connection

from tests.worker_processes import Services


@pytest.fixture
def services(settings, tmp_path):
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis") or connection.vendor != "postgresql":
        if os.environ.get("CI"):
            pytest.fail("CI must run the fault tests against Redis and PostgreSQL (bin/test sets them)")
        pytest.skip("needs CELERY_BROKER_URL=redis://… and DATABASE_URL=postgres://… (bin/test sets them)")
    return Services(settings=settings, tmp_path=tmp_path, broker=broker)


@pytest.fixture
def running(services):
    yield services
    services.stop_all()
