"""The roles as groups, and the default rubric of recipe 4.3 with the
awkward-case rules decided before any grading."""

from django.db import migrations

QUESTIONS = [
    ("series", "Is this the right series for the question?", False, ""),
    ("period", "Is it the right period?", False, ""),
    ("unit", "Is the unit stated?", False, ""),
    (
        "caveat",
        "Where the record's metadata carries a caveat (provisional, break in series, limited coverage), does the answer state it?",
        True,
        "Not applicable when no retrieved record carries a caveat.",
    ),
    (
        "unsupported_claim",
        "Does the answer claim anything the retrieved records do not support?",
        False,
        "",
    ),
]

AWKWARD_CASES = [
    {
        "case": "A correct value attached to the wrong period",
        "rule": "The period question is no; the grade is a material error when the period changes what the user concludes.",
    },
    {
        "case": "A range where the records hold a point value",
        "rule": "Partially resolved when the range contains the value and says it is approximate; a material error when it excludes it.",
    },
    {
        "case": "A refusal",
        "rule": "Unresolved when the data could answer; resolved when the records really lack the level or period asked for and the answer says so.",
    },
    {
        "case": "A correct but incomplete answer",
        "rule": "Partially resolved: say in the note what is missing. It is a material error only if the gap turns it into a wrong unconditional statement.",
    },
]

GUIDANCE = (
    "Judge the answer against the evidence shown beside it, not against what you know. "
    "First decide whether it addresses the question at all; then answer every rubric question; "
    "then grade: look for a material error first, then judge how much of the request is met. "
    "Use pending verification when a deciding fact cannot be checked yet; it is not a grade. "
    "Form (short or long, paragraph or table) gains or loses nothing unless it hides a condition."
)


def create(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ("reviewer", "lead", "manager", "admin"):
        Group.objects.get_or_create(name=name)
    Rubric = apps.get_model("reviewapp", "Rubric")
    RubricVersion = apps.get_model("reviewapp", "RubricVersion")
    RubricQuestion = apps.get_model("reviewapp", "RubricQuestion")
    rubric, _ = Rubric.objects.get_or_create(name="Statistics answers (recipe 4.3)")
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
