"""`manage.py validate_rules [--strict]`: every active pattern rule against its own samples, and every
pattern against every other rule's correct samples (SPEC §6.5, §11.3)."""
from django.core.management.base import BaseCommand, CommandError

from snippets.services import validate_library

EXIT_FAULTS = 1
EXIT_CROSS_HITS = 2


class Command(BaseCommand):
    help = (
        "Validate every active pattern rule: its violation pattern must match each of its wrong samples, "
        "its verdict must spare each of its correct samples, its satisfied pattern must clear none of its "
        "wrong samples. Also reports each cross-hit (a pattern that flags another rule's correct sample). "
        f"Exit {EXIT_FAULTS} on any fault; with --strict, exit {EXIT_CROSS_HITS} on any cross-hit too."
    )

    def add_arguments(self, parser):
        parser.add_argument("--strict", action="store_true", help="fail on cross-hits as well as on faults")

    def handle(self, *args, strict, **options):
        report = validate_library()
        for identifier, where, message in report.faults:
            self.stdout.write(f"FAULT     {identifier}.{where}: {message}")
        for hit in report.cross_hits:
            self.stdout.write(f"CROSS-HIT {hit.rule} flags correct sample {hit.sample} of {hit.other}")
        rows = (
            ("rules checked", report.rules_checked),
            ("faults", len(report.faults)),
            ("cross-hits", len(report.cross_hits)),
            ("rules without a verdict", len(report.without_verdict)),
        )
        width = max(len(label) for label, _ in rows)
        self.stdout.write("")
        for label, value in rows:
            self.stdout.write(f"{label:<{width}}  {value:>5}")
        if report.faults:
            raise CommandError(f"{len(report.faults)} fault(s): fix or deactivate those rules.",
                               returncode=EXIT_FAULTS)
        if strict and report.cross_hits:
            raise CommandError(f"{len(report.cross_hits)} cross-hit(s) under --strict.", returncode=EXIT_CROSS_HITS)
