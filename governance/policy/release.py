"""Policy releases as one service (SPEC §12): test a policy or a draft, dry-run a draft with its replay,
apply it through the regression gate, keep and restore versions. Commands, the API and the admin call these.
"""
from __future__ import annotations

from governance.policy.testing import run_examples, select_examples


def test_policy(*, draft=None, only: list[str] | None = None, judges: str = "cached", prune: bool = True):
    """Screen the examples under the current policy, or under `draft` (a document), writing nothing."""
    if draft is None:
        return run_examples(select_examples(only), judges=judges)
    from governance.policy.drafts import draft_policy

    with draft_policy(draft, prune=prune):
        # The draft's own examples, when it holds an examples section, are the ones tested.
        report = run_examples(select_examples(only), judges=judges)
    report.draft = True
    return report


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
