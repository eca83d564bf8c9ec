import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.test import TestCase
from django.urls import reverse

from tests.helpers import PASSWORD, make_user

ROOT = Path(__file__).resolve().parents[3]


def manage(*args, **env):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}, **env},
        capture_output=True,
        text=True,
    )


def test_it_passes_the_deployment_checks_in_production():
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_ENV="production",
        DJANGO_SECRET_KEY="k" * 20 + "a-long-random-production-secret-key-9f8e7d6c5b4a",
        DJANGO_ALLOWED_HOSTS="review.example.org",
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_it_refuses_production_without_a_secret_key():
    result = manage("check", DJANGO_ENV="production", DJANGO_SECRET_KEY="")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


class FooterTests(TestCase):
    def test_it_says_where_data_live_and_where_tasks_run(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        with self.settings(CELERY_TASK_ALWAYS_EAGER=True):
            response = self.client.get(reverse("home"))
        self.assertContains(response, "tasks run in-process (no broker set)")
        with self.settings(CELERY_TASK_ALWAYS_EAGER=False):
            response = self.client.get(reverse("home"))
        self.assertContains(response, "tasks run on Celery workers")
        self.assertContains(response, "files in the data folder")
        s3 = {**settings.STORAGES, "data": {"BACKEND": "x", "OPTIONS": {"bucket_name": "evidence"}}}
        with self.settings(STORAGE_KIND="s3", STORAGES=s3):
            response = self.client.get(reverse("home"))
        self.assertContains(response, "files in bucket evidence")


def test_a_command_says_nothing_of_the_login_throttle_when_all_is_well():
    # django-axes logged "AXES: BEGIN version …" on every start, five times in the demo's output.
    result = manage("check")
    assert result.returncode == 0, result.stderr
    assert "AXES" not in result.stdout + result.stderr
