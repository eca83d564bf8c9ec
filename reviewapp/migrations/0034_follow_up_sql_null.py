"""A question's follow-up left out is SQL NULL, as the ORM stores None: the
question sets stored by COPY held JSON null, which ``follow_up__isnull=False``
matches, so storing a run read back every question's follow-up."""

from django.db import migrations


def sql_null(apps, schema_editor):
    question_model = apps.get_model("reviewapp", "Question")
    # filter(follow_up=None) is JSON null; update(follow_up=None) writes SQL NULL.
    question_model.objects.filter(follow_up=None).update(follow_up=None)


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0033_answer_run_unchecked"),
    ]

    operations = [migrations.RunPython(sql_null, migrations.RunPython.noop, elidable=True)]
