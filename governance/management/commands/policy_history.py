"""`manage.py policy_history`: the kept policy versions, newest first (SPEC §12.4)."""
from django.core.management.base import BaseCommand

from governance.policy import versions


class Command(BaseCommand):
    help = "List the kept policy versions, newest first: number, time, actor, source and what changed."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=50, help="how many versions (default 50)")

    def handle(self, *args, limit=50, **options):
        rows = versions.history(limit)
        if not rows:
            self.stdout.write("No policy version is kept yet.")
            return
        for revision in rows:
            summary = revision.summary or {}
            counts = ", ".join(f"{len(summary.get(kind) or ())} {kind}" for kind in ("created", "changed", "removed"))
            self.stdout.write(f"{revision.number:>6}  {revision.at:%Y-%m-%d %H:%M:%S}  "
                              f"{revision.actor or '-'}  {revision.source or '-'}  {counts}"
                              + (f"  author {revision.author}, approver {revision.approver}"
                                 if revision.author or revision.approver else ""))
            for kind in ("created", "changed", "removed"):
                for label in summary.get(kind) or ():
                    self.stdout.write(f"        {kind} {label}")
