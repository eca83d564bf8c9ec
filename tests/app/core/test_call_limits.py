"""A judge's concurrency holds across every worker (issue 29, point 3): calls
take slots of a semaphore in Redis, and a killed worker's slots come back
when their leases end. With real worker processes and a local provider
that counts the calls it holds at once."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from reviewapp.core import limits
from reviewapp.models import JudgeRun, ModelVerdict
from tests.provider_servers import SlowJudgeServer
from tests.worker_processes import generated_run, judge_by, upload

# Real processes: bin/test runs these beside the rest of tests/app.
pytestmark = pytest.mark.integration


@pytest.fixture
def redis_limits(settings):
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis"):
        if os.environ.get("CI"):
            pytest.fail("CI must run the call-limit tests against Redis (bin/test sets it)")
        pytest.skip("needs CELERY_BROKER_URL=redis://… (bin/test sets it)")
    settings.CALL_LIMITS_REDIS_URL = broker
    return broker


def test_threads_of_one_process_never_hold_more_slots_than_the_limit(redis_limits):
    name = f"test-{uuid.uuid4().hex}"
    counts = {"now": 0, "most": 0, "done": 0}
    lock = threading.Lock()

    def call():
        with limits.call_slot(name, 2):
            with lock:
                counts["now"] += 1
                counts["most"] = max(counts["most"], counts["now"])
            time.sleep(0.05)
            with lock:
                counts["now"] -= 1
                counts["done"] += 1

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert counts == {"now": 0, "most": 2, "done": 8}


HOLDER = """
import sys, time, django
django.setup()
from reviewapp.core import limits
with limits.call_slot(sys.argv[1], 2), limits.call_slot(sys.argv[1], 2):
    print("held", flush=True)
    time.sleep(120)
"""


def test_a_killed_holders_slots_come_back_when_their_leases_end(redis_limits, settings):
    name = f"test-{uuid.uuid4().hex}"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, name],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "reviewapp.settings",
            "CELERY_BROKER_URL": redis_limits,
            "REVIEWAPP_CALL_SLOT_LEASE_SECONDS": "2",
        },
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        # Alive, it renews its leases: no slot for as long as it holds them.
        waited = threading.Event()
        threading.Thread(target=lambda: (_take(name), waited.set()), daemon=True).start()
        assert not waited.wait(3.5), "a slot was given while both were held and renewed"
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        killed_at = time.monotonic()
        assert waited.wait(10), "the killed holder's slots never came back"
        assert time.monotonic() - killed_at <= 2.5  # within the lease
    finally:
        holder.kill()


def _take(name):
    with limits.call_slot(name, 2):
        pass


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_judge_of_concurrency_4_run_by_two_workers_never_has_more_than_4_calls_in_flight(running, tmp_path):
    path, _ = generated_run(tmp_path, answers=400, version="limit-judge")
    server = SlowJudgeServer(delay_s=0.05)
    try:
        workers = [running.worker(), running.worker()]
        run = upload(path)
        judge_run = judge_by(running, run, server, name="limited", concurrency=4)
        calls = judge_run.estimate["calls"]
        running.wait(
            lambda: JudgeRun.objects.get(id=judge_run.id).status in ("done", "failed"),
            what="the judge run to finish",
            seconds=120,
        )
        finished = JudgeRun.objects.get(id=judge_run.id)
        assert (finished.status, finished.error) == ("done", "")
        assert ModelVerdict.objects.filter(judge_run=judge_run, error="").count() == calls
        assert server.counter["answered"] == calls
        # Each worker's pool has 4 threads: 8 calls at once without the shared limit.
        assert server.counter["most_in_flight"] == 4
        # Both workers judged.
        for log in running.logs[: len(workers)]:
            assert re.search(r"judge_chunk_task\[[^\]]+\] succeeded", log.read_text()), log.name
    finally:
        server.close()
