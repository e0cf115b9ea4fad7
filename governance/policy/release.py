"""Policy releases as one service (SPEC §12): test a policy or a draft, dry-run a draft with its replay,
apply it through the regression gate, keep and restore versions. Commands, the API and the admin call these.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance.errors import Conflict, UnknownRecord  # noqa: F401 -- UnknownRecord: callers catch it from here
from governance.models import GovernanceEvent, PolicyExample, PolicyVersion
from governance.policy import replay as replaying
from governance.policy.drafts import under_draft
from governance.policy.importing import import_policy
from governance.policy.testing import PolicyTestReport, run_examples, select_examples
from governance.policy.versions import acting, document_of, releasing
from governance.runs.rehearsal import rehearsal


def test_policy(*, draft=None, only: list[str] | None = None, judges: str = "cached", prune: bool = True):
    """Screen the examples under the current policy, or under `draft` (a document), writing nothing."""
    with rehearsal():  # judges are asked, no usage row is written
        return _test_policy(draft=draft, only=only, judges=judges, prune=prune)


def _test_policy(*, draft, only, judges, prune):
    if draft is None:
        return run_examples(select_examples(only), judges=judges)
    # The draft's own examples, when it holds an examples section, are the ones tested; its judges are
    # asked between passes, never under the draft's write lock (drafts.under_draft).
    _imported, report = under_draft(draft, lambda: run_examples(select_examples(only), judges=judges),
                                    prune=prune)
    report.draft = True
    return report


@dataclass
class ReleasePlan:
    """What a draft would do (SPEC §12.3): its records, the examples before and after, and the replay."""

    report: object  # ImportReport, dry_run=True
    before: PolicyTestReport
    after: PolicyTestReport
    replay: replaying.ReplayReport
    changed_examples: list[dict] = field(default_factory=list)

    @property
    def regressions(self) -> list[str]:
        """Examples that pass now and would fail under the draft."""
        return [c["name"] for c in self.changed_examples if c["before"] == "passed" and c["after"] != "passed"]

    def as_dict(self, *, task_ids: bool = True) -> dict:
        """With `task_ids` false (the API), the replay is counts only (replay.ReplayReport.as_counts)."""
        return {**self.report.as_dict(),
                "examples": {"before": self.before.as_dict(), "after": self.after.as_dict(),
                             "changed": self.changed_examples, "regressions": self.regressions},
                "replay": self.replay.as_dict() if task_ids else self.replay.as_counts()}


MSG_EXAMPLES_REGRESSED = gettext_lazy("The draft makes %(count)d passing example(s) fail: %(names)s. Nothing was "
                                      "written; allow regressions to apply it anyway.")


class ExamplesRegressed(Conflict):
    """Applying the draft would make passing examples fail; an administrator may allow it."""

    default_code = "examples_regressed"

    def __init__(self, plan: ReleasePlan):
        names = plan.regressions
        super().__init__(
            str(MSG_EXAMPLES_REGRESSED) % {"count": len(names), "names": ", ".join(names)},
            fields={"regressions": names})
        self.plan = plan


def _state(result) -> str:
    if result is None:
        return "absent"
    return "passed" if result.passed else ("error" if result.error else "failed")


def plan_release(document, *, prune: bool = True, replay: int = replaying.DEFAULT_REPLAY,
                 replay_judges: bool = False, cost_cap: float = 0.0) -> ReleasePlan:
    """Dry-run `document`: the import report, the examples under current and draft, the replay. Writes nothing."""
    with rehearsal():  # judges are asked, no usage row is written
        return _plan_release(document, prune=prune, replay=replay, replay_judges=replay_judges, cost_cap=cost_cap)


def _plan_release(document, *, prune, replay, replay_judges, cost_cap) -> ReleasePlan:
    texts = replaying.retained_texts(replay)
    before = run_examples(select_examples(), judges="cached")
    replay_before = replaying.screen_all(texts, judges=replay_judges, cost_cap=cost_cap)
    def under_the_draft():
        return (run_examples(select_examples(), judges="cached"),
                replaying.screen_all(texts, judges=replay_judges, cost_cap=cost_cap))

    report, (after, replay_after) = under_draft(document, under_the_draft, prune=prune)
    report.dry_run = True
    after.draft = True
    changed = []
    names = sorted({e.name for e in before.examples} | {e.name for e in after.examples})
    for name in names:
        was, will = _state(before.result_of(name)), _state(after.result_of(name))
        if was != will:
            changed.append({"name": name, "before": was, "after": will})
    return ReleasePlan(report, before, after, replaying.compare(replay_before, replay_after, judges=replay_judges),
                       changed)


def apply_release(document, *, prune: bool = True, allow_regressions: bool = False, actor: str = "",
                  source: str = "import", replay: int = 0, author: str = "", extra: dict | None = None):
    """Import `document` through the gate (SPEC §12.3): refused when it regresses an example, unless allowed.

    The applied release is a governance event with its version, actor, counts and accepted regressions.
    Returns (ImportReport, ReleasePlan).
    """
    # With no example stored nothing can regress: the draft needs no trial run.
    plan = plan_release(document, prune=prune, replay=replay) if replay or PolicyExample.objects.exists() else None
    if plan is not None and plan.regressions and not allow_regressions:
        raise ExamplesRegressed(plan)
    accepted = len(plan.regressions) if plan else 0
    # `author` (a draft's, SPEC §12.5) and the approver (`actor`) are kept with the version; a direct release
    # (no draft) is its actor's, who wrote and approved it alone.
    with acting(actor, source), releasing(author=author or actor, approver=actor,
                                          regressions_accepted=accepted), transaction.atomic():
        report = import_policy(document, prune=prune)
        if report.has_changes:
            GovernanceEvent.objects.create(
                correlation_id=f"release-{PolicyVersion.current()}", decision="released", check_name="policy",
                actor=actor[:150], detail={
                    "version": PolicyVersion.current(), "source": source, "created": len(report.created),
                    "changed": len(report.changed), "removed": len(report.removed),
                    "regressions_accepted": accepted,
                    "regressions": plan.regressions if plan else [], **(extra or {})})
    return report, plan


def restore_version(number: int, *, actor: str = "", allow_regressions: bool = False):
    """Make version `number` the policy again: an import of its document, through the same gate."""
    import yaml

    text = document_of(number)
    if text is None:
        raise UnknownRecord(_("Policy version %(number)s is not kept.") % {"number": number},
                            code="unknown_version")
    return apply_release(yaml.safe_load(text), prune=True, allow_regressions=allow_regressions, actor=actor,
                         source="restore")


def format_plan(plan: ReleasePlan) -> list[str]:
    """The examples and replay part of a dry run, as lines for the command."""
    lines = [f"Examples: {plan.before.passed} of {len(plan.before.examples)} pass now, "
             f"{plan.after.passed} of {len(plan.after.examples)} would pass under the draft."]
    for change in plan.changed_examples:
        mark = " (regression)" if change["name"] in plan.regressions else ""
        lines.append(f"  example {change['name']}: {change['before']} -> {change['after']}{mark}")
    r = plan.replay
    lines.append(f"Replay of {r.replayed} retained task text(s)"
                 + (" with judges" if r.judges else ", deterministic checks only") + ":")
    if not r.changes:
        lines.append("  no outcome or hint would change.")
    for kind, ids in sorted(r.changes.items()):
        lines.append(f"  {kind}: {len(ids)} task(s): {', '.join(ids)}")
    for key, moved in sorted(r.by_rule.items()):
        lines.append(f"  {key}: fires on {len(moved['new'])} more, {len(moved['lost'])} fewer")
    if r.not_screened:
        lines.append(f"  not screened (configuration gone): {len(r.not_screened)} task(s)")
    return lines


def format_test_report(report) -> str:
    """The text table `test_policy` prints: each example, then each rule and term, then the judges."""
    lines = []
    width = max([len(e.name) for e in report.examples] + [7])
    lines.append(f"{'example':<{width}}  result  outcome (expected)")
    for e in report.examples:
        state = "passed" if e.passed else ("error" if e.error else "FAILED")
        lines.append(f"{e.name:<{width}}  {state:<6}  {e.outcome or '-'} ({e.expected_outcome})")
        if e.error:
            lines.append(f"{'':<{width}}    {e.error}")
        for finding in e.missing:
            lines.append(f"{'':<{width}}    missing: {_finding_text(finding)}")
        for finding in e.unexpected:
            lines.append(f"{'':<{width}}    unexpected: {_finding_text(finding)}")
        for finding in e.not_checked:
            lines.append(f"{'':<{width}}    not checked (judges skipped): {_finding_text(finding)}")
    if report.rules:
        lines.append("")
        rule_width = max(len(r.key) for r in report.rules)
        lines.append(f"{'rule or term':<{rule_width}}  fired  expected  precision  recall  tp  fp  fn  tn")
        for r in report.rules:
            lines.append(f"{r.key:<{rule_width}}  {r.fired:>5}  {r.expected:>8}  {_ratio(r.precision):>9}  "
                         f"{_ratio(r.recall):>6}  {r.true_positive:>2}  {r.false_positive:>2}  "
                         f"{r.false_negative:>2}  {r.true_negative:>2}")
    lines.append("")
    judges = report.judges
    lines.append(f"judges ({report.judge_mode}): {judges['calls']} call(s), {judges['cache_hits']} from the "
                 f"verdict cache, cost {judges['cost']:.6f}")
    lines.append(f"{report.passed} passed, {report.failed} failed" + (" (draft, nothing written)" if report.draft else ""))
    return "\n".join(lines)


def _ratio(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _finding_text(finding: dict) -> str:
    return ", ".join(f"{k}: {v}" for k, v in finding.items())
