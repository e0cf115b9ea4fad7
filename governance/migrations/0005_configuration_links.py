"""Judge chains and fallbacks become ordered relations (issue 11): rows that point at the
configuration, so a rename cannot orphan them. The JSON identifier lists are copied into
the new rows here and dropped in 0006 (PostgreSQL refuses to alter a table with pending
deferred foreign-key checks in the same transaction).
"""

import django.db.models.deletion
from django.db import migrations, models


def copy_lists_into_links(apps, schema_editor):
    """Each name in the old lists becomes a row in its place; a name that already pointed at
    nothing (an orphan, which judged as "always passes") or at itself is dropped, and said."""
    Configuration = apps.get_model("governance", "Configuration")
    links = {"rule_judges": (apps.get_model("governance", "JudgeLink"), "judge"),
             "fallbacks": (apps.get_model("governance", "FallbackLink"), "fallback")}
    by_name = {c.identifier: c for c in Configuration.objects.all()}
    for configuration in by_name.values():
        for field, (model, target) in links.items():
            position = 0
            for name in dict.fromkeys(getattr(configuration, field) or []):
                other = by_name.get(name) if isinstance(name, str) else None
                if other is None or other.pk == configuration.pk:
                    print(f"\n  {configuration.identifier}.{field}: dropped {name!r} (no such configuration, or itself)")
                    continue
                model.objects.create(configuration=configuration, position=position, **{target: other})
                position += 1


def copy_links_into_lists(apps, schema_editor):
    Configuration = apps.get_model("governance", "Configuration")
    for configuration in Configuration.objects.all():
        configuration.rule_judges = [link.judge.identifier for link in
                                     configuration.judge_links.order_by("position", "pk").select_related("judge")]
        configuration.fallbacks = [link.fallback.identifier for link in
                                   configuration.fallback_links.order_by("position", "pk").select_related("fallback")]
        configuration.save(update_fields=["rule_judges", "fallbacks"])


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0004_task'),
    ]
    operations = [
        migrations.CreateModel(
            name='FallbackLink',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveSmallIntegerField(default=0, verbose_name='position')),
                ('configuration', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='fallback_links', to='governance.configuration', verbose_name='configuration')),
                ('fallback', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='fallback_for_links', to='governance.configuration', verbose_name='fallback')),
            ],
            options={
                'verbose_name': 'fallback',
                'verbose_name_plural': 'fallbacks',
                'ordering': ['position', 'pk'],
                'constraints': [models.UniqueConstraint(fields=('configuration', 'fallback'), name='fallback_link_unique'), models.CheckConstraint(condition=models.Q(('fallback', models.F('configuration')), _negated=True), name='fallback_link_not_self')],
            },
        ),
        migrations.CreateModel(
            name='JudgeLink',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveSmallIntegerField(default=0, verbose_name='position')),
                ('configuration', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='judge_links', to='governance.configuration', verbose_name='configuration')),
                ('judge', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='judge_for_links', to='governance.configuration', verbose_name='judge')),
            ],
            options={
                'verbose_name': 'rule judge',
                'verbose_name_plural': 'rule judges',
                'ordering': ['position', 'pk'],
                'constraints': [models.UniqueConstraint(fields=('configuration', 'judge'), name='judge_link_unique'), models.CheckConstraint(condition=models.Q(('judge', models.F('configuration')), _negated=True), name='judge_link_not_self')],
            },
        ),
        migrations.RunPython(copy_lists_into_links, copy_links_into_lists),
    ]
