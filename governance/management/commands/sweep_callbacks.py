"""`manage.py sweep_callbacks`: send again every open callback whose message may be lost, once (issue 25).

Celery beat runs the same sweep every GAVEL_SWEEP_INTERVAL_SECONDS where a broker is configured; the
embedded default runs it from its requests (governance/work/embedded_sweep.py). This command is for a
shell or cron: without a broker it delivers here and waits for the deliveries (their retries included).
"""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from governance.work.callbacks import wait_until_idle
from governance.work.tasks import sweep_callbacks


class Command(BaseCommand):
    help = ("Send again every open callback (pending or failing) that is GAVEL_CALLBACK_SWEEP_GRACE_SECONDS "
            "past its due time, and finish batches whose last worker died. Without a broker the callbacks "
            "are delivered by this command, which waits for them.")

    def add_arguments(self, parser):
        parser.add_argument("--wait", type=float, default=600.0, metavar="SECONDS",
                            help="without a broker: wait at most this long for the deliveries (default 600)")

    def handle(self, *args, wait=600.0, **options):
        sent = sweep_callbacks()
        if settings.CELERY_TASK_ALWAYS_EAGER and not wait_until_idle(wait):
            raise CommandError(f"Sent {sent} callback(s) again; some were still being delivered after {wait:g} s.")
        where = "delivered here" if settings.CELERY_TASK_ALWAYS_EAGER else "sent to the workers"
        self.stdout.write(f"Sent {sent} callback(s) again ({where}).")
