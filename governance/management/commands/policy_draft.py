"""`manage.py policy_draft`: a policy draft's report (SPEC §12.5) — the same JSON the API and the admin show."""
import argparse
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from governance.errors import GavelError
from governance.models import PolicyDraft
from governance.policy import PolicyInvalid
from governance.policy import proposals
from governance.policy.proposals_report import DEFAULT_COST_CAP, draft_report
from governance.policy.replay import DEFAULT_REPLAY
from governance.policy.testing import JUDGE_MODES

ACTOR = "command:policy_draft"


class Command(BaseCommand):
    help = ("Show a policy draft's report: its changes as a diff, conflicts with the live policy, the examples "
            "under both policies, and the replay of retained texts. --list lists the drafts; --restore N makes a "
            "draft that would restore version N (nothing goes live until it is published).")

    def add_arguments(self, parser):
        parser.add_argument("draft", nargs="?", type=int, help="the draft's id")
        parser.add_argument("--list", action="store_true", help="list the drafts, newest first")
        parser.add_argument("--restore", type=int, metavar="VERSION",
                            help="make a draft that turns the live policy into this kept version")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--replay", type=int, default=DEFAULT_REPLAY, metavar="N",
                            help="replay the retained texts of the last N tasks (default 500; 0 for none)")
        parser.add_argument("--replay-hours", type=float, metavar="H",
                            help="instead, replay the retained texts of the last H hours")
        parser.add_argument("--judges", choices=JUDGE_MODES, default=None,
                            help="judges for the examples (default: cached when the report runs judges, else skip)")
        parser.add_argument("--replay-judges", action=argparse.BooleanOptionalAction, default=None,
                            help="run the judges for this report (examples and replay), or not; without either, "
                                 "the draft's own choice holds")
        parser.add_argument("--cost-cap", type=float, default=DEFAULT_COST_CAP,
                            help="what the report's judges may cost at most (default 1.0)")
        parser.add_argument("--counts-only", action="store_true",
                            help="the replay as counts, without task ids (what the API shows)")
        parser.add_argument("--submit", action="store_true", help="submit the open draft for approval")
        parser.add_argument("--resolve", action="append", default=[], metavar="SECTION:NAME=draft|live",
                            help="settle a conflict: keep the draft's record, or take the live one (repeatable)")
        parser.add_argument("--publish", action="store_true",
                            help="publish the draft now, through the release gate")
        parser.add_argument("--allow-regressions", action="store_true",
                            help="with --publish: publish even when passing examples would fail")
        parser.add_argument("--publish-at", metavar="WHEN",
                            help="let the worker (or publish_due_drafts) publish it at this ISO time, or 'now'")
        parser.add_argument("--revision", metavar="HASH",
                            help="with --publish or --publish-at: the draft's revision as you read it (its report's "
                                 "draft.revision); refused if the draft changed since")

    def handle(self, *args, draft=None, list=False, restore=None, format="text", replay=DEFAULT_REPLAY,
               replay_hours=None, judges=None, replay_judges=None, cost_cap=DEFAULT_COST_CAP, counts_only=False, submit=False,
               publish=False, allow_regressions=False, publish_at=None, resolve=(), revision=None, **options):
        if list:
            for row in PolicyDraft.objects.order_by("-updated_at", "-id"):
                self.stdout.write(f"{row.pk:>6}  {row.status:<9}  {row.author_label or '-':<24}  "
                                  f"base {row.base_version}  {len(row.changes)} change(s)  {row.title}")
            return
        if replay < 0 or (replay_hours is not None and not 0 <= replay_hours <= 8760):
            raise CommandError("--replay must be 0 or more, --replay-hours between 0 and 8760.")
        try:
            if restore is not None:
                found = proposals.draft_from_version(restore, ACTOR)
                self.stderr.write(f"Draft {found.pk} restores version {restore}; nothing is live until it is "
                                  f"published.")
            elif draft is None:
                raise CommandError("Name a draft (its id), or use --list or --restore N.")
            else:
                found = PolicyDraft.objects.filter(pk=draft).first()
                if found is None:
                    raise CommandError(f"No draft {draft}.")
                if submit or publish or publish_at or resolve:
                    return self.act(found, submit=submit, publish=publish, allow_regressions=allow_regressions,
                                    publish_at=publish_at, resolve=resolve, revision=revision)
            report = draft_report(found, replay_tasks=replay, replay_hours=replay_hours, judges=judges,
                                  replay_judges=replay_judges, cost_cap=cost_cap, task_ids=not counts_only)
        except (GavelError, PolicyInvalid) as exc:
            raise CommandError(str(exc)) from exc
        if format == "json":
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
            return
        for line in text_lines(report):
            self.stdout.write(line)

    def act(self, draft: PolicyDraft, *, submit: bool, publish: bool, allow_regressions: bool, publish_at,
            resolve=(), revision=None) -> None:
        """Resolve, submit, schedule or publish, as the operator (`command:policy_draft`)."""
        for item in resolve:
            record, _sep, take = item.rpartition("=")
            section, _sep, name = record.partition(":")
            if take not in ("draft", "live") or not section or not name:
                raise CommandError(f"--resolve takes SECTION:NAME=draft or SECTION:NAME=live, not {item!r}.")
            proposals.resolve_conflict(draft, section, name, take)
            self.stdout.write(f"Draft {draft.pk}: {section}:{name} resolved ({take}).")
        if submit:
            proposals.submit(draft, ACTOR)
            self.stdout.write(f"Draft {draft.pk} submitted.")
        if publish_at:
            at = timezone.now() if publish_at == "now" else parse_datetime(publish_at)
            if at is None:
                raise CommandError("--publish-at takes an ISO time (2026-12-24T06:00:00+01:00) or 'now'.")
            if timezone.is_naive(at):
                at = timezone.make_aware(at)
            proposals.schedule_publish(draft, ACTOR, at, revision=revision)
            self.stdout.write(f"Draft {draft.pk} publishes at {at.isoformat()} (the worker, or publish_due_drafts).")
        if publish:
            version = proposals.publish(draft, ACTOR, allow_regressions=allow_regressions, revision=revision)
            self.stdout.write(f"Draft {draft.pk} published as version {version}.")


def text_lines(report: dict) -> list[str]:
    d = report["draft"]
    lines = [f"Draft {d['id']}: {d['title'] or '-'} ({d['status']}, by {d['author'] or '-'})",
             f"Started at version {d['base_version']}; live is {d['live_version']}"
             + (" (the live policy moved since)." if d["base_moved"] else ".")]
    if d["publish_at"]:
        lines.append(f"Publishes at {d['publish_at']} (scheduled by {d['scheduled_by']}).")
    if d["published_version"]:
        lines.append(f"Published as version {d['published_version']} by {d['approver']}, "
                     f"{d['regressions_accepted']} regression(s) accepted.")
    for comment in d["comments"]:
        lines.append(f"Comment by {comment['author']} at {comment['at']}: {comment['text']}")
    lines.append(f"{len(report['changes'])} change(s):")
    lines += [f"  {c['action']} {c['section']}:{c['name']}" for c in report["changes"]]
    for c in report["conflicts"]:
        lines.append(f"CONFLICT {c['section']}:{c['name']}: changed live and in the draft; resolve it first.")
    for c in report.get("conflict_side") or ():
        lines.append(f"  {c['sentence']}")
    for path, messages in (report.get("errors") or {}).items():
        lines += [f"error {path}: {m}" for m in messages]
    for item in report.get("left_out") or ():
        for path, messages in item["errors"].items():
            lines += [f"left out {path}: {m}" for m in messages]
    if report.get("generation"):
        lines.append(report["generation"]["sentence"])
    for row in (report.get("blocked") or {}).get("records") or ():
        lines.append(f"Blocked: {row['sentence']}")
        lines += [f"  task {task_id}" for task_id in row.get("task_ids") or ()]
    if report["diff"]:
        lines += ["", report["diff"].rstrip("\n"), ""]
    test = report.get("test")
    if test:
        lines.append(f"Examples: {test['live']['passed']} of {len(test['live']['examples'])} pass live, "
                     f"{test['draft']['passed']} of {len(test['draft']['examples'])} under the draft.")
        for c in test["changed"]:
            mark = " (regression)" if c["example"] in test["regressions"] else ""
            lines.append(f"  example {c['example']}: {c['live']} -> {c['draft']}{mark}")
        for row in test["rules"]:
            lines.append(f"  {row['rule']}: {row['in_words']}")
    replay = report.get("replay")
    if replay:
        window = replay["window"]
        lines.append(f"Replay of {replay['screened']} retained text(s) "
                     + (f"of the last {window['hours']} hour(s):" if "hours" in window
                        else f"of the last {window['tasks']} task(s):"))
        if replay.get("withheld"):
            lines.append(f"  withheld: fewer than {replay['min_texts']} texts (GAVEL_REPORT_MIN_TEXTS).")
        for kind, count in sorted((replay.get("counts") or {}).items()):
            lines.append(f"  {kind}: {count}")
        for c in replay.get("changed", ()):
            where = f" at {c['passage']['start']}-{c['passage']['end']}" if c["passage"] else ""
            moved = ", ".join([*(f"+{k}" for k in c["rules"]["new"]), *(f"-{k}" for k in c["rules"]["lost"])])
            lines.append(f"  task {c['task_id']}: {c['before']} -> {c['after']} ({moved}){where}")
        if replay.get("without_judges"):
            lines.append(f"  {replay['without_judges']}")
    if report.get("judges"):
        j = report["judges"]
        cap = f" (cap {j['cost_cap']})" if j.get("cost_cap") else " (judges not run)"
        lines.append(f"Judges: {j['calls']} call(s), {j['cached']} from the verdict cache, cost {j['cost']}{cap}.")
        if j.get("sentence"):
            lines.append(f"  {j['sentence']}")
    return lines
