"""The policy version's one row exists from the start, so PolicyVersion.bump is a single UPDATE."""
from django.db import migrations


def create_row(apps, schema_editor):
    PolicyVersion = apps.get_model("governance", "PolicyVersion")
    PolicyVersion.objects.get_or_create(pk=1, defaults={"value": 1})


class Migration(migrations.Migration):

    dependencies = [
        ("governance", "0002_protect_escalation_validate_throttle_rate"),
    ]

    operations = [
        migrations.RunPython(create_row, migrations.RunPython.noop),
    ]
