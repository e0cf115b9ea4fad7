"""Write the policy document's JSON Schema (governance/policy/schema.py) to stdout, for policies/policy.schema.json
and for editors with no access to a running Gavel (it is also served at /api/v1/policy/schema.json)."""
import json

from django.core.management.base import BaseCommand

from governance.policy import schema


class Command(BaseCommand):
    help = "Print the policy document's JSON Schema (what policies/policy.schema.json holds)."

    def add_arguments(self, parser):
        parser.add_argument("--id", default=None, help="The URL to give as $id (where it is served).")

    def handle(self, *args, **options):
        self.stdout.write(json.dumps(schema.published(options["id"]), indent=2, ensure_ascii=False))
