"""`manage.py purge_governance --days N`: delete governance events and empty task contents older
than N days (SPEC §2.7, §10)."""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from governance.work import queue
from governance.screening.service import purge_governance


class Command(BaseCommand):
    help = (
        "Delete governance events older than N days (default 30) and empty the inputs, answers, edited "
        "texts and hint passages of tasks created more than N days ago (default GAVEL_TASK_RETENTION_DAYS). "
        "N < 1 is refused."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=None,
                            help="keep the last N days (N >= 1); default 30 for events, "
                                 "GAVEL_TASK_RETENTION_DAYS for task contents")

    def handle(self, *args, days, **options):
        event_days = 30 if days is None else days
        task_days = settings.GAVEL_TASK_RETENTION_DAYS if days is None else days
        try:
            deleted, cutoff = purge_governance(event_days)
            emptied = queue.purge_contents(task_days)
        except ValueError:
            # The services make the one check of N; the command only words the refusal for the shell.
            raise CommandError(
                "--days must be at least 1: purging everything is not what this command is for."
            ) from None
        self.stdout.write(
            f"Deleted {deleted} governance event(s) older than {event_days} day(s) "
            f"(before {cutoff:%Y-%m-%d %H:%M:%S %Z})."
        )
        self.stdout.write(f"Emptied the contents of {emptied} task(s) created more than {task_days} day(s) ago.")
