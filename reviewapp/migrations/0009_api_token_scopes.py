from django.db import migrations, models

import reviewapp.models

# The scopes as they were when tokens first had them. Tokens made before
# then could do everything, so they keep every scope; from now on their
# user's role limits them, and they expire API_TOKEN_DAYS after this migration.
SCOPES_AT_INTRODUCTION = ["runs:write", "sets:write", "runs:read", "gate:read"]


def give_existing_tokens_every_scope(apps, schema_editor):
    ApiToken = apps.get_model("reviewapp", "ApiToken")
    ApiToken.objects.update(scopes=SCOPES_AT_INTRODUCTION)


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0008_work_leases"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="scopes",
            field=models.JSONField(default=list),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(default=reviewapp.models.api_token_expiry),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="revoked_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(give_existing_tokens_every_scope, migrations.RunPython.noop),
    ]
