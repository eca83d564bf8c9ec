"""The real worker processes of tests/worker_processes.py, as fixtures."""

import pytest

from tests.worker_processes import Services, require_redis_and_postgres


@pytest.fixture
def services(settings, tmp_path):
    broker = require_redis_and_postgres("the fault tests")
    return Services(settings=settings, tmp_path=tmp_path, broker=broker)


@pytest.fixture
def running(services):
    yield services
    services.stop_all()
