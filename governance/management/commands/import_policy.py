"""`manage.py import_policy FILE|-`: import a policy document (SPEC §11.2)."""
import yaml
from django.core.management.base import BaseCommand, CommandError

from governance import policy
from governance.management import read_input
from governance.policy import proposals, release, release_paths
from governance.policy.loading import load_yaml

DRAFT_ACTOR = "command:import_policy"


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
        parser.add_argument("--replay", type=int, default=release.replaying.DEFAULT_REPLAY, metavar="N",
                            help="dry run: screen the retained answers of the last N tasks under both policies "
                                 "(default 500; 0 for none)")
        parser.add_argument("--replay-judges", action="store_true",
                            help="dry run: ask the judges in the replay too (costs model calls)")
        parser.add_argument("--replay-cost-cap", type=float, default=1.0, metavar="COST",
                            help="dry run with --replay-judges: stop asking judges once the replay cost this much "
                                 "(default 1.0)")
        parser.add_argument("--allow-regressions", action="store_true",
                            help="apply even when a passing policy example would fail")
        parser.add_argument("--draft", metavar="TITLE",
                            help="make (or update) a policy draft of this title instead of releasing: nothing goes "
                                 "live until the draft is published")

    def handle(self, *args, file, dry_run, prune, replay=release.replaying.DEFAULT_REPLAY, replay_judges=False,
               replay_cost_cap=1.0, allow_regressions=False, draft=None, **options):
        if draft is not None and (dry_run or allow_regressions):
            raise CommandError("--draft makes a draft and releases nothing: its report is `policy_draft ID`, and "
                               "an approver publishes it (`policy_draft ID --publish [--allow-regressions]`).")
        try:
            text = read_input(file, options.get("stdin"))
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"Cannot read {file}: {exc}") from exc
        try:
            document = load_yaml(text)
        except yaml.YAMLError as exc:
            raise CommandError(f"{file} does not parse as YAML: {exc}") from exc
        plan = None
        try:
            if draft is not None:
                return self.make_draft(document, draft, prune=prune)
            if dry_run:
                plan = release.plan_release(document, prune=prune, replay=replay, replay_judges=replay_judges,
                                            cost_cap=replay_cost_cap if replay_judges else 0.0)
                report = plan.report
            else:
                released = release_paths.release_or_draft(document, actor=DRAFT_ACTOR, source="import", prune=prune,
                                                          title=f"import_policy {file}"[:200],
                                                          allow_regressions=allow_regressions)
                if isinstance(released, release_paths.Proposed):
                    self.stdout.write("Four eyes (GAVEL_POLICY_FOUR_EYES=1): nothing is released; the file is a "
                                      "draft another approver publishes.")
                    return self.print_draft(released.draft, released.created)
                report, plan = released
        except release.ExamplesRegressed as exc:
            for line in release.format_plan(exc.plan):
                self.stderr.write(line)
            raise CommandError(f"{exc} (--allow-regressions)") from exc
        except policy.PolicyInvalid as exc:
            for path, messages in exc.errors.items():
                for message in messages:
                    self.stderr.write(f"{path}: {message}")
            count = sum(len(m) for m in exc.errors.values())
            raise CommandError(f"{count} error(s) in {file}; nothing was written.") from exc
        if dry_run and plan is not None:
            for line in release.format_plan(plan):
                self.stdout.write(line)
        self.print_report(report)
        if not dry_run and plan is not None and plan.regressions:
            self.stdout.write(f"Applied with {len(plan.regressions)} regression(s) accepted: "
                              f"{', '.join(plan.regressions)}")

    def make_draft(self, document, title: str, *, prune: bool) -> None:
        """`--draft TITLE`: the file's changes into a draft; the same title, still open, is updated."""
        found, created = proposals.draft_from_document(document, DRAFT_ACTOR, title=title, prune=prune)
        self.print_draft(found, created)

    def print_draft(self, found, created: bool) -> None:
        self.stdout.write(f"Draft {found.pk} {'created' if created else 'updated'}: {len(found.changes)} change(s); "
                          f"nothing is live until it is published.")
        for change in found.changes:
            self.stdout.write(f"  {change['action']} {change['section']}:{change['name']}")
        self.stdout.write(f"Its report: manage.py policy_draft {found.pk}")

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
