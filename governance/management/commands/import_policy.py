"""`manage.py import_policy FILE|-`: import a policy document (SPEC §11.2)."""
import yaml
from django.core.management.base import BaseCommand, CommandError

from governance import policy
from governance.management import read_input


class Command(BaseCommand):
    help = (
        "Import a policy document (YAML or JSON; '-' reads standard input), atomically: every error "
        "is printed with its path and nothing is written. An administrator's act: it writes every field."
    )
    # call_command(..., stdin=StringIO(...)) lets tests feed standard input.
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("file", help="policy file, or - for standard input")
        parser.add_argument("--dry-run", action="store_true", help="validate and show what would change; write nothing")
        parser.add_argument("--prune", action="store_true",
                            help="remove records of the sections in the file that the file no longer names")

    def handle(self, *args, file, dry_run, prune, **options):
        try:
            text = read_input(file, options.get("stdin"))
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"Cannot read {file}: {exc}") from exc
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise CommandError(f"{file} does not parse as YAML: {exc}") from exc
        try:
            report = policy.import_policy(document, prune=prune, dry_run=dry_run)
        except policy.PolicyInvalid as exc:
            for path, messages in exc.errors.items():
                for message in messages:
                    self.stderr.write(f"{path}: {message}")
            count = sum(len(m) for m in exc.errors.values())
            raise CommandError(f"{count} error(s) in {file}; nothing was written.") from exc
        self.print_report(report)

    def print_report(self, report: policy.ImportReport) -> None:
        verbs = ("Created", "Changed", "Removed")
        if report.dry_run:
            verbs = ("Would create", "Would change", "Would remove")
        for verb, entries in zip(verbs, (report.created, report.changed, report.removed)):
            for entry in entries:
                keys = report.changed_keys.get(entry)
                self.stdout.write(f"{verb} {entry}" + (f" ({', '.join(keys)})" if keys else ""))
        summary = (
            f"{len(report.created)} created, {len(report.changed)} changed, "
            f"{len(report.removed)} removed, {len(report.unchanged)} unchanged."
        )
        if report.dry_run:
            self.stdout.write(f"Dry run, nothing was written: {summary}")
        else:
            self.stdout.write(self.style.SUCCESS(summary))
