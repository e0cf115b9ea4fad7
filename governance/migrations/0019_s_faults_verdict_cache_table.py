"""The verdict cache's table (SPEC §12.4): the embedded default keeps verdicts in the database, so every
process of an installation sees them (with Redis configured the table stays unused)."""
from django.conf import settings
from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations


def create_table(apps, schema_editor):
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, settings.VERDICT_CACHE_TABLE, False)


def drop_table(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(settings.VERDICT_CACHE_TABLE)}")


class Migration(migrations.Migration):
    dependencies = [("governance", "0018_s_faults_callback_due")]

    operations = [migrations.RunPython(create_table, drop_table)]
