"""`manage.py policy_diff A B`: how two kept policy versions differ, in policy-file terms (SPEC §12.4)."""
from django.core.management.base import BaseCommand, CommandError

from governance.policy import versions


class Command(BaseCommand):
    help = "Show the difference between the policy files of two kept versions (a unified diff)."

    def add_arguments(self, parser):
        parser.add_argument("a", type=int, help="the older version")
        parser.add_argument("b", type=int, help="the newer version")

    def handle(self, *args, a, b, **options):
        text = versions.diff(a, b)
        if text is None:
            raise CommandError(f"Version {a} or {b} is not kept (policy_history lists them).")
        self.stdout.write(text or f"Versions {a} and {b} hold the same policy.", ending="\n" if not text else "")
