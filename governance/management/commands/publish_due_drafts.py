"""`manage.py publish_due_drafts`: publish the drafts whose time has come (SPEC §12.5), through the gate.

With a worker and celery beat this runs every GAVEL_SWEEP_INTERVAL_SECONDS on its own; on the embedded
default (no beat) run it from cron, e.g. every minute.
"""
from django.core.management.base import BaseCommand

from governance.policy import proposals


class Command(BaseCommand):
    help = ("Publish the policy drafts whose publish time has come, each through the release gate against the "
            "policy of this moment. A refused one (a regression, a conflict) stays a draft, its time cleared.")

    def handle(self, *args, **options):
        results = proposals.publish_due()
        for result in results:
            if "published" in result:
                self.stdout.write(f"Draft {result['draft']} published as version {result['published']}.")
            else:
                self.stdout.write(f"Draft {result['draft']} refused: {result['refused']}.")
        if not results:
            self.stdout.write("No draft is due.")
