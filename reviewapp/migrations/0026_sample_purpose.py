from django.db import migrations, models
from django.db.models import Exists, OuterRef


def record_purposes(apps, schema_editor):
    """Samples drawn before the field existed: a judge run's regrade sample
    says so through the judge run; a sample nobody was assigned, every item
    of which a lead decided and a judge's validation set holds, was drawn to
    validate that judge (the demo's "decided by the lead"). The rest were
    drawn for review."""
    Sample = apps.get_model("reviewapp", "Sample")
    JudgeRun = apps.get_model("reviewapp", "JudgeRun")
    SampleItem = apps.get_model("reviewapp", "SampleItem")
    Assignment = apps.get_model("reviewapp", "Assignment")
    ValidationItem = apps.get_model("reviewapp", "ValidationItem")
    regrades = JudgeRun.objects.filter(regrade_sample__isnull=False).values("regrade_sample_id")
    Sample.objects.filter(id__in=regrades).update(purpose="judge_regrade")
    assigned = Assignment.objects.filter(item__sample=OuterRef("pk"))
    outside_validation = SampleItem.objects.filter(sample=OuterRef("pk"), answer__isnull=False).exclude(
        id__in=ValidationItem.objects.values("item_id")
    )
    with_items = SampleItem.objects.filter(sample=OuterRef("pk"), answer__isnull=False)
    Sample.objects.filter(purpose="review").filter(
        Exists(with_items), ~Exists(assigned), ~Exists(outside_validation)
    ).update(purpose="judge_validation")


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0025_question_cluster"),
    ]

    operations = [
        migrations.AddField(
            model_name="sample",
            name="purpose",
            field=models.CharField(
                choices=[
                    ("review", "drawn for review"),
                    ("judge_regrade", "a judge's human regrade sample"),
                    ("judge_validation", "decided to validate a judge"),
                ],
                default="review",
                max_length=20,
            ),
        ),
        migrations.RunPython(record_purposes, migrations.RunPython.noop),
    ]
