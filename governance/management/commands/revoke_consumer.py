"""`manage.py revoke_consumer NAME`: the consumer's token stops working (SPEC §9, §11.3)."""
from django.core.management.base import BaseCommand, CommandError

from governance.models import Consumer


class Command(BaseCommand):
    help = "Revoke a consumer: its token is refused from now on. The record stays, for the log."

    def add_arguments(self, parser):
        parser.add_argument("name")

    def handle(self, *args, name, **options):
        consumer = Consumer.objects.filter(name=name).first()
        if consumer is None:
            raise CommandError(f"No consumer named {name}.")
        if consumer.revoked_at is not None:
            self.stdout.write(f"{name} was already revoked at {consumer.revoked_at:%Y-%m-%d %H:%M:%S %Z}.")
            return
        Consumer.objects.filter(pk=consumer.pk).revoke()
        self.stdout.write(self.style.SUCCESS(f"Revoked {name}: its token is refused from now on."))
