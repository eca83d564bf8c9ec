"""manage.py backup and restore: the demo, backed up and restored into a
fresh database and an empty data folder by another process, shows the same
dashboard figures and holds the same logs; a restore over data is refused."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from reviewapp.core import files
from tests.worker_processes import require_redis_and_postgres

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# Printed by a process on either installation: every version's dashboard
# figures on each set it ran, and each run's stored log by its sha256.
FIGURES = """
import hashlib, json
from reviewapp.core import files
from reviewapp.models import AssistantVersion, Run
from reviewapp.versions.records import set_versions_of
from reviewapp.versions.selectors import dashboard_figure_rows, version_dashboard
figures = {
    f"{version.label} on {set_version.version}": dashboard_figure_rows(version_dashboard(version, set_version))
    for version in AssistantVersion.objects.order_by("label")
    for set_version in set_versions_of(version)
}
logs = {run.sha256: hashlib.sha256(files.read_bytes(run.stored_name)).hexdigest() for run in Run.objects.all()}
print(json.dumps({"figures": figures, "logs": logs}, sort_keys=True, default=str))
"""


def _database_url(name: str) -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"


def _manage(*argv: str, env: dict) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "manage.py", *argv],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
    )


def _printed(done: subprocess.CompletedProcess) -> dict:
    """The script's JSON: its last line (the app's log may come first)."""
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def fresh_database():
    name = f"{connection.settings_dict['NAME']}_restored"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    yield name
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_demo_restored_into_a_fresh_installation_shows_the_same_figures(
    settings, tmp_path, fresh_database
):
    require_redis_and_postgres("the backup test")
    call_command("demo", answers=300, stdout=StringIO())
    here = {
        "DATABASE_URL": _database_url(connection.settings_dict["NAME"]),
        "REVIEWAPP_DATA_DIR": str(settings.DATA_DIR),
    }
    before = _manage("shell", "-c", FIGURES, env=here)
    assert before.returncode == 0, before.stderr
    archive = tmp_path / "demo-backup.tar"
    out = StringIO()
    call_command("backup", str(archive), stdout=out)
    assert "stored files" in out.getvalue()

    restored = {
        "DATABASE_URL": _database_url(fresh_database),
        "REVIEWAPP_DATA_DIR": str(tmp_path / "restored"),
    }
    done = _manage("restore", str(archive), env=restored)
    assert done.returncode == 0, done.stderr
    assert "Restored the postgresql database and 5 stored files" in done.stdout
    after = _manage("shell", "-c", FIGURES, env=restored)
    assert after.returncode == 0, after.stderr

    figures_before, figures_after = _printed(before), _printed(after)
    assert len(figures_before["figures"]) >= 3 and len(figures_before["logs"]) == 5
    assert figures_after == figures_before
    assert all(sha == read for sha, read in figures_after["logs"].items())

    # Restoring it again, over what is there now, is refused and changes nothing.
    again = _manage("restore", str(archive), env=restored)
    assert again.returncode != 0
    assert "is not empty" in again.stderr
    assert _printed(_manage("shell", "-c", FIGURES, env=restored)) == figures_before


def test_a_restore_over_data_or_from_another_file_says_why_and_touches_nothing(settings, tmp_path):
    require_redis_and_postgres("the backup test")
    files.put_bytes("runs/kept.jsonl", b"{}\n")
    archive = tmp_path / "backup.tar"
    call_command("backup", str(archive), stdout=StringIO())
    with pytest.raises(CommandError, match="is not empty"):
        call_command("restore", str(archive), stdout=StringIO())
    with pytest.raises(CommandError, match="exists already"):
        call_command("backup", str(archive), stdout=StringIO())
    stray = tmp_path / "notes.txt"
    stray.write_text("not a backup")
    with pytest.raises(CommandError, match="not a backup made by manage"):
        call_command("restore", str(stray), stdout=StringIO())
    assert files.read_bytes("runs/kept.jsonl") == b"{}\n"
