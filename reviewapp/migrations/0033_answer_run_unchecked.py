"""An answer's run is no longer checked by the database at commit: a
million checks of the same run row took 3.2–3.5 s at the end of storing a
1M-answer run, while nothing else could go on."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0032_chunk_lines_and_timing"),
    ]

    operations = [
        migrations.AlterField(
            model_name="answer",
            name="run",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="answers",
                to="reviewapp.run",
            ),
        ),
    ]
