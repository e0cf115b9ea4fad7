"""`manage.py export_policy [--output FILE] [--policy-version N]`: the policy as YAML (SPEC §11.2, §12.4)."""
from django.core.management.base import BaseCommand, CommandError

from governance import policy
from governance.policy.versions import document_of


class Command(BaseCommand):
    help = "Write the whole policy as YAML in the format of policy-example.yaml (every key, in its order)."

    def add_arguments(self, parser):
        parser.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
        parser.add_argument("--policy-version", type=int, metavar="N",
                            help="write the document of kept policy version N (see policy_history)")

    def handle(self, *args, output=None, policy_version=None, **options):
        if policy_version is None:
            text = policy.export_yaml()
        else:
            text = document_of(policy_version)
            if text is None:
                raise CommandError(f"Policy version {policy_version} is not kept (policy_history lists them).")
        if not output:
            self.stdout.write(text, ending="")
            return
        try:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise CommandError(f"Cannot write {output}: {exc}") from exc
        self.stdout.write(f"Wrote the policy to {output}.")
