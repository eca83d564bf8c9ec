"""Chunks cut by line number instead of answer id, and each chunk's timing
kept with it: planning a million answers reads a few dozen rows of the run's
(run, line) index instead of numbering every answer, and adding a scoring up
reads each chunk's timing columns instead of every check's JSON."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def lines_of_answers(apps, schema_editor):
    chunk_model = apps.get_model("reviewapp", "ScoringChunk")
    answer_model = apps.get_model("reviewapp", "Answer")

    def line_of(column):
        return Subquery(answer_model.objects.filter(id=OuterRef(column)).values("line_number")[:1])

    chunk_model.objects.update(first_line=line_of("first_answer_id"), last_line=line_of("last_answer_id"))


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0031_follow_ups"),
    ]

    operations = [
        migrations.AddField(
            model_name="scoringchunk", name="first_line", field=models.PositiveIntegerField(null=True)
        ),
        migrations.AddField(
            model_name="scoringchunk", name="last_line", field=models.PositiveIntegerField(null=True)
        ),
        migrations.RunPython(lines_of_answers, migrations.RunPython.noop, elidable=True),
        migrations.AlterModelOptions(name="scoringchunk", options={"ordering": ("scoring", "first_line")}),
        migrations.RemoveField(model_name="scoringchunk", name="first_answer_id"),
        migrations.RemoveField(model_name="scoringchunk", name="last_answer_id"),
        migrations.AlterField(
            model_name="scoringchunk", name="first_line", field=models.PositiveIntegerField()
        ),
        migrations.AlterField(
            model_name="scoringchunk", name="last_line", field=models.PositiveIntegerField()
        ),
        migrations.AlterField(
            model_name="scoringchunk", name="answers", field=models.PositiveIntegerField(default=0)
        ),
        migrations.AddField(
            model_name="scoringchunk", name="timing", field=models.BinaryField(blank=True, null=True)
        ),
    ]
