"""`manage.py test_policy`: screen every policy example and say which pass (SPEC §12.2)."""
import json

import yaml
from django.core.management.base import BaseCommand, CommandError

from governance import policy
from governance.errors import GavelError
from governance.management import read_input
from governance.policy.release import format_test_report, test_policy
from governance.policy.testing import JUDGE_MODES
from governance.policy.loading import load_yaml


class Command(BaseCommand):
    help = ("Screen every policy example under the current policy, or under a draft (--draft FILE, nothing "
            "written), and report each example, each rule and term, and the judge calls. Exit 0 when every "
            "example passed, 1 when one failed, 3 on an error.")
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("--draft", help="a policy file to test instead of the current policy (- for stdin)")
        parser.add_argument("--only", help="comma-separated example names")
        parser.add_argument("--judges", choices=JUDGE_MODES, default="cached",
                            help="live: ask every judge; cached: reuse verdicts of the verdict cache (default); "
                                 "skip: ask no judge")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args, draft=None, only=None, judges="cached", format="text", **options):
        document = None
        if draft:
            try:
                document = load_yaml(read_input(draft, options.get("stdin")))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                raise CommandError(f"Cannot read {draft}: {exc}", returncode=3) from exc
        names = [n.strip() for n in only.split(",") if n.strip()] if only else None
        try:
            report = test_policy(draft=document, only=names, judges=judges)
        except policy.PolicyInvalid as exc:
            for path, messages in exc.errors.items():
                for message in messages:
                    self.stderr.write(f"{path}: {message}")
            raise CommandError("The draft has errors; nothing was tested.", returncode=3) from exc
        except GavelError as exc:
            raise CommandError(str(exc), returncode=3) from exc
        if format == "json":
            self.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
        else:
            self.stdout.write(format_test_report(report))
        if not report.ok:
            # Exit 1: an example failed (the report above says which).
            raise SystemExit(1)
