"""`manage.py run_workers [celery worker options]`: GAVEL_WORKER_PROCESSES Celery worker processes
(default: one per core), each with GAVEL_WORKER_CONCURRENCY threads and GAVEL_WORKER_DB_CONNECTIONS
database connections; a worker that dies is started again (governance/work/supervisor.py)."""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from governance.work.supervisor import Supervisor


class Command(BaseCommand):
    help = ("Run GAVEL_WORKER_PROCESSES Celery worker processes (default: one per core), restarting any that "
            "dies; the options after the command (e.g. -l info) are passed to each `celery worker`.")

    def add_arguments(self, parser):
        parser.add_argument("celery_args", nargs="*", help="options for each `celery -A governance worker`")

    def run_from_argv(self, argv):
        # Every option after the command is Celery's (`-l info`, `-Q …`): none is parsed here.
        self._celery_args = argv[2:]
        super().run_from_argv(argv[:2])

    def handle(self, *args, **options):
        celery_args = getattr(self, "_celery_args", None) or list(options.get("celery_args") or [])
        processes = settings.GAVEL_WORKER_PROCESSES
        if processes < 1:
            raise CommandError("GAVEL_WORKER_PROCESSES must be at least 1.")
        threads, connections = settings.CELERY_WORKER_CONCURRENCY, settings.GAVEL_WORKER_DB_CONNECTIONS
        self.stdout.write(f"{processes} worker processes, {threads} tasks at once each; at most "
                          f"{processes * connections} database connections ({connections} per process)")
        self.stdout.flush()
        supervisor = Supervisor(processes, celery_args, restart_seconds=settings.GAVEL_WORKER_RESTART_SECONDS,
                                out=self.stdout)
        raise SystemExit(supervisor.run())
