"""Names shared by the load test's setup, locustfile and runner (bench/README.md).

Everything lives apart from the other benchmarks and from development data:
its own PostgreSQL database, Redis database 11 and port, and bench/out/load/.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "load"
PYTHON = sys.executable

DATABASE = "reviewapp_load"
REDIS_URL = "redis://127.0.0.1:6379/11"
REDIS_DB = "11"
PORT = 8125
HOST = f"http://127.0.0.1:{PORT}"
# The TLS-terminating proxy's view of the site: production settings trust
# X-Forwarded-Proto and check a POST's Origin against this.
PUBLIC_ORIGIN = f"https://127.0.0.1:{PORT}"

# Test accounts in a throwaway database; never a real password.
PASSWORD = "load-test-only-password"
REVIEWERS = [f"load-reviewer-{number:02d}" for number in range(1, 51)]
MANAGERS = [f"load-manager-{number:02d}" for number in range(1, 21)]
LEAD = "load-lead"
PIPELINE = "load-pipeline"
QUEUE_NAME = "Load test queue"

# The released version, whose 1M answers and finished review managers read,
# and the candidate whose queue reviewers work through.
ASSISTANT_VERSION = "app-1.0"
CANDIDATE_VERSION = "app-1.1"

# The rows of locust's statistics that the targets are about.
SUBMIT = "submit → next item"
DASHBOARD = f"version dashboard ({ASSISTANT_VERSION})"


def environment(*, production: bool) -> dict[str, str]:
    """Settings for manage.py, gunicorn and the worker. ``production`` is the
    docker-compose deployment (DJANGO_ENV=production, a secret key, static
    files collected for whitenoise); without it, the plain settings the
    uploads in load_setup.py use, as bench_app.py does."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "reviewapp.settings",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DATABASE}",
        "CELERY_BROKER_URL": REDIS_URL,
        "REVIEWAPP_DATA_DIR": str(OUT / "data"),
        "STATIC_ROOT": str(OUT / "static"),
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
    }
    if production:
        env.update(
            DJANGO_ENV="production",
            # A new key each run: sessions live in the database and every
            # simulated user logs in afresh.
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        )
    else:
        env.pop("DJANGO_ENV", None)
    return env


def manage(env: dict, *args: str, timeout: int = 600) -> str:
    """Run a management command against the load test's database; its output."""
    return subprocess.run(
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
    ).stdout
