"""`manage.py purge_governance --days N`: delete governance events older than N days (SPEC §2.7)."""
from django.core.management.base import BaseCommand, CommandError

from governance.services import purge_governance


class Command(BaseCommand):
    help = (
        "Delete governance events older than N days (default 30; N < 1 is refused). "
        "Task contents will be purged here too once tasks exist (SPEC §10); this version has no tasks."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=30, help="keep the last N days (N >= 1, default 30)")

    def handle(self, *args, days, **options):
        try:
            deleted, cutoff = purge_governance(days)
        except ValueError:
            # The service makes the one check of N; the command only words the refusal for the shell.
            raise CommandError(
                "--days must be at least 1: purging everything is not what this command is for."
            ) from None
        self.stdout.write(
            f"Deleted {deleted} governance event(s) older than {days} day(s) (before {cutoff:%Y-%m-%d %H:%M:%S %Z})."
        )
