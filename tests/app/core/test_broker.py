"""The broker's marker and the sweep's heartbeat (reviewapp.core.broker),
against the suite's Redis, and the run page's word when nothing sweeps."""

import threading
import time

import pytest
from django.test import Client

from reviewapp.core import broker
from reviewapp.models import Run
from tests.helpers import PASSWORD, make_user
from tests.worker_processes import require_redis_and_postgres

# Real processes: bin/test runs these beside the rest of tests/app.
pytestmark = pytest.mark.integration


@pytest.fixture
def redis_broker(settings):
    require_redis_and_postgres("the broker's marker tests")
    client = broker._client()
    client.delete(broker.MARKER_KEY, broker.HEARTBEAT_KEY)
    yield client
    client.delete(broker.MARKER_KEY, broker.HEARTBEAT_KEY)


def test_the_marker_tells_a_broker_that_lost_its_keys(redis_broker):
    assert broker.messages_lost()  # never set: the first sweep sends everything once
    broker.messages_resent()
    assert not broker.messages_lost()
    redis_broker.flushdb()  # as Redis restarted without saving
    assert broker.messages_lost()


def test_the_heartbeat_lasts_two_sweep_intervals(redis_broker, settings):
    settings.WORK_SWEEP_SECONDS = 1
    assert broker.swept_recently() is False
    broker.heartbeat()
    assert broker.swept_recently() is True
    time.sleep(2.2)
    assert broker.swept_recently() is False


def test_a_broker_that_cannot_be_reached_tells_nothing(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"  # nothing listens there
    assert broker.swept_recently() is None
    assert not broker.messages_lost()
    broker.heartbeat()  # logged, never raised


def test_a_worker_sends_the_sweep_when_none_ran_lately(redis_broker, settings):
    settings.WORK_SWEEP_SECONDS = 1
    sent, stop = [], threading.Event()
    watcher = broker.keep_swept(lambda: sent.append(time.monotonic()), stop)
    try:
        time.sleep(0.2)
        assert len(sent) == 1  # at once: no heartbeat yet
        broker.heartbeat()
        time.sleep(1.2)
        assert len(sent) == 1  # beat swept: the worker leaves it be
        time.sleep(2.5)
        assert len(sent) >= 2  # beat stopped: the worker sweeps
    finally:
        stop.set()
        watcher.join(timeout=5)


@pytest.mark.django_db
def test_the_run_page_says_when_nothing_sweeps(redis_broker):
    from tests.fixtures import load_generated_run

    run = load_generated_run(answers=10)
    Run.objects.filter(id=run.id).update(status="received", queued_at=None)
    make_user("lead")
    client = Client()
    client.login(username="lead", password=PASSWORD)

    page = client.get(run.get_absolute_url()).content.decode()
    assert "Waiting for the scheduler" in page
    broker.heartbeat()
    page = client.get(run.get_absolute_url()).content.decode()
    assert "Waiting for the scheduler" not in page
