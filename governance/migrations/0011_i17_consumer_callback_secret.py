"""Consumer.callback_secret: every consumer signs its callbacks (X-Gavel-Signature), existing ones included."""
import secrets

from django.db import migrations, models


def give_every_consumer_a_secret(apps, schema_editor):
    Consumer = apps.get_model("governance", "Consumer")
    for consumer in Consumer.objects.filter(callback_secret="").only("pk"):
        Consumer.objects.filter(pk=consumer.pk).update(callback_secret="gvs_" + secrets.token_urlsafe(32))


class Migration(migrations.Migration):
    dependencies = [("governance", "0010_field_explanations_2")]

    operations = [
        migrations.AddField(
            model_name="consumer",
            name="callback_secret",
            field=models.CharField(
                blank=True, default="", editable=False, max_length=64, verbose_name="callback secret",
                help_text="Signs this consumer's callbacks (X-Gavel-Signature). Shown once by create_consumer; "
                          "create_consumer --rotate-secret replaces it."),
        ),
        migrations.RunPython(give_every_consumer_a_secret, migrations.RunPython.noop),
    ]
