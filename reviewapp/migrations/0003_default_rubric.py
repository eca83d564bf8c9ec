"""The roles as groups, and the default rubric of recipe 4.3 with the
awkward-case rules decided before any grading."""

from django.db import migrations

from reviewapp.review.defaults import AWKWARD_CASES, GUIDANCE, QUESTIONS, RUBRIC_NAME

def create(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ("reviewer", "lead", "manager", "admin"):
        Group.objects.get_or_create(name=name)
    Rubric = apps.get_model("reviewapp", "Rubric")
    RubricVersion = apps.get_model("reviewapp", "RubricVersion")
    RubricQuestion = apps.get_model("reviewapp", "RubricQuestion")
    rubric, _ = Rubric.objects.get_or_create(name=RUBRIC_NAME)
    if rubric.versions.exists():
        return
    version = RubricVersion.objects.create(
        rubric=rubric, number=1, guidance=GUIDANCE, awkward_cases=AWKWARD_CASES
    )
    for position, (key, text, allows_na, na_rule) in enumerate(QUESTIONS, start=1):
        RubricQuestion.objects.create(
            rubric_version=version, position=position, key=key, text=text, allows_na=allows_na, na_rule=na_rule
        )


class Migration(migrations.Migration):
    dependencies = [("reviewapp", "0002_review"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
