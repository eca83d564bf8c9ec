"""A run's log is named in the file store (runs/<sha256>.jsonl), not by a
path on the host that received it: a worker on another host, or one whose
data folder is mounted elsewhere, finds it by the same name."""

from django.db import migrations
from django.db.models import F, Value
from django.db.models.functions import Concat


def names_from_digests(apps, schema_editor):
    # Every log was stored as <data folder>/runs/<sha256>.jsonl.
    Run = apps.get_model("reviewapp", "Run")
    Run.objects.update(stored_name=Concat(Value("runs/"), F("sha256"), Value(".jsonl")))


def paths_from_names(apps, schema_editor):
    from django.conf import settings

    Run = apps.get_model("reviewapp", "Run")
    Run.objects.update(stored_name=Concat(Value(f"{settings.DATA_DIR}/"), F("stored_name")))


class Migration(migrations.Migration):
    dependencies = [("reviewapp", "0034_follow_up_sql_null")]

    operations = [
        migrations.RenameField(model_name="run", old_name="file_path", new_name="stored_name"),
        migrations.RunPython(names_from_digests, paths_from_names),
    ]
