"""The JSON identifier lists, copied into JudgeLink / FallbackLink rows by 0005, go."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("governance", "0005_configuration_links"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="configuration",
            name="fallbacks",
        ),
        migrations.RemoveField(
            model_name="configuration",
            name="rule_judges",
        ),
        migrations.RemoveField(
            model_name="historicalconfiguration",
            name="fallbacks",
        ),
        migrations.RemoveField(
            model_name="historicalconfiguration",
            name="rule_judges",
        ),
    ]
