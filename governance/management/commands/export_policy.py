"""`manage.py export_policy [--output FILE]`: the policy as YAML (SPEC §11.2)."""
from django.core.management.base import BaseCommand, CommandError

from governance import policy


class Command(BaseCommand):
    help = "Write the whole policy as YAML in the format of policy-example.yaml (every key, in its order)."

    def add_arguments(self, parser):
        parser.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")

    def handle(self, *args, output=None, **options):
        text = policy.export_yaml()
        if not output:
            self.stdout.write(text, ending="")
            return
        try:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise CommandError(f"Cannot write {output}: {exc}") from exc
        self.stdout.write(f"Wrote the policy to {output}.")
