from django.db import migrations, models

STATUSES = [
    ("ok", "answered"),
    ("error", "error"),
    ("timeout", "timed out"),
    ("cancelled", "cancelled"),
    ("refused_quota", "refused (quota)"),
]


class Migration(migrations.Migration):
    """A run may hold several attempts of each question (its header's
    repetitions), and an attempt may end without an answer. Existing answers
    become attempt 1, status ok, of runs made once with the 600 s default."""

    dependencies = [
        ("reviewapp", "0009_api_token_scopes"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="answer",
            name="answer_unique_question",
        ),
        migrations.AddField(
            model_name="answer",
            name="attempt",
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="answer",
            name="status",
            field=models.CharField(choices=STATUSES, default="ok", max_length=16),
        ),
        migrations.AddConstraint(
            model_name="answer",
            constraint=models.UniqueConstraint(
                fields=("run", "question_id", "attempt"), name="answer_unique_attempt"
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="repetitions",
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="run",
            name="timeout_s",
            field=models.PositiveIntegerField(default=600),
        ),
        migrations.AddField(
            model_name="run",
            name="repeats_ref",
            field=models.CharField(blank=True, max_length=200),
        ),
    ]
