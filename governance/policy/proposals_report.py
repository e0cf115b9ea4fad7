"""A draft's report (SPEC §12.5): the one JSON document the admin's draft page, the API and
`manage.py policy_draft` all show — its changes as a diff in policy-file terms, the conflicts, the examples
under the live policy and under the draft with precision and recall per rule and term in words, the replay
of the retained texts of a window, what the judges cost, and what the replay cannot see (report_limits).

Nothing is written: the draft is in force only inside `drafts.under_draft`, rolled back, its judges asked
between passes. The replay names tasks by their full id with the offsets of the passage that changed, never
a text; for readers who may not open every task (administrator consumers of the API) `task_ids=False` gives
counts only, as a dry run over the API does (`replay.ReplayReport.as_counts`).
"""
from __future__ import annotations

import difflib

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from governance.models import PolicyDraft, PolicyVersion
from governance.policy import PolicyInvalid, export_policy
from governance.policy import replay as replaying
from governance.policy import schedule_failures
from governance.policy import report_limits as limits
from governance.policy.drafts import under_draft
from governance.policy.dump import to_yaml
from governance.policy.proposals import draft_document, revision_of
from governance.policy.testing import JUDGE_MODES, run_examples, select_examples
from governance.runs.rehearsal import rehearsal
from termlists.matcher import matches_outside

# A window in hours replays at most this many texts (newest first).
MAX_WINDOW_TASKS = replaying.MAX_WINDOW_TASKS
# Passages listed per changed text (the first is `passage`).
MAX_PASSAGES = 5
# What the judges of one report may cost at most, in the currency of the usage records (their `cost`):
# half for the live policy's replay, half for the draft's.
DEFAULT_COST_CAP = 1.0


def draft_facts(draft: PolicyDraft) -> dict:
    live = PolicyVersion.current()
    return {
        "id": draft.pk, "title": draft.title, "status": draft.status, "author": draft.author_label,
        # What an approver names when publishing (SPEC §12.5): the draft as they read it.
        "revision": revision_of(draft), "approved_revision": draft.approved_revision or None,
        "approval_withdrawn": draft.approval_withdrawn or None,
        "base_version": draft.base_version, "live_version": live, "base_moved": live != draft.base_version,
        "publish_at": draft.publish_at.isoformat() if draft.publish_at else None,
        "scheduled_by": draft.scheduled_by, "published_version": draft.published_version,
        # The worker's last refusal to publish at the set time, until the draft is scheduled again.
        "schedule_failure": schedule_failures.failure_text(draft.schedule_failure) or None,
        "schedule_failure_code": schedule_failures.failure_code(draft.schedule_failure) or None,
        "schedule_failed_at": draft.schedule_failed_at.isoformat() if draft.schedule_failed_at else None,
        "approver": draft.approver_label, "regressions_accepted": draft.regressions_accepted,
        "created_at": draft.created_at.isoformat(), "updated_at": draft.updated_at.isoformat(),
        "comments": [{"author": c.author_label, "text": c.text, "at": c.created_at.isoformat()}
                     for c in draft.comments.all()],
    }


def diff_text(live: dict, document: dict, *, live_version: int, draft_id) -> str:
    """The draft against the live policy as a unified diff of the two policy files."""
    return "".join(difflib.unified_diff(to_yaml(live).splitlines(keepends=True),
                                        to_yaml(document).splitlines(keepends=True),
                                        fromfile=f"live version {live_version}", tofile=f"draft {draft_id}"))


def draft_report(draft: PolicyDraft, *, replay_tasks: int | None = replaying.DEFAULT_REPLAY,
                 replay_hours: float | None = None, judges: str | None = None, replay_judges: bool | None = None,
                 cost_cap: float | None = None, task_ids: bool = True) -> dict:
    """The draft's report (shape in docs/releases.md, "Drafts"). With `replay_hours`, the window is the
    retained texts of the last hours (at most MAX_WINDOW_TASKS); else the last `replay_tasks` tasks.

    Judges run as the draft says (`PolicyDraft.replay_judges`) unless `replay_judges` overrides it for this
    report; the examples' judges follow (cached, or skip) unless `judges` names a mode. The replay's judges
    stop before they would pass `cost_cap` (DEFAULT_COST_CAP), half of it for each policy."""
    with_judges = draft.replay_judges if replay_judges is None else bool(replay_judges)
    judges = judges or ("cached" if with_judges else "skip")
    if judges not in JUDGE_MODES:
        raise ValueError(f"judges must be one of {JUDGE_MODES}")
    live = export_policy()
    live_version = PolicyVersion.current()
    document, conflicts = draft_document(draft, live)
    changes = draft.changes or []
    report = {
        "draft": draft_facts(draft),
        "changes": [{"section": c["section"], "name": c["name"], "action": c["action"]} for c in changes],
        "diff": diff_text(live, document, live_version=live_version, draft_id=draft.pk),
        "conflicts": [c.as_dict() for c in conflicts],
        # A conflict is tested with the draft's own side (the document keeps the live one until resolved).
        "conflict_side": limits.conflict_side(conflicts, live_version),
        "errors": {},
        "left_out": [],
    }
    tested = limits.with_draft_side(document, conflicts)
    report["generation"] = limits.generation_part(changes, live, tested)
    if replay_hours is not None:
        window, limit = {"hours": replay_hours}, MAX_WINDOW_TASKS
    else:
        window, limit = {"tasks": replay_tasks or 0}, replay_tasks or 0
    report["blocked"] = limits.blocked_part(changes, live, tested, window, task_ids=task_ids)
    cap = (DEFAULT_COST_CAP if cost_cap is None else float(cost_cap)) if with_judges else 0.0
    side_cap = cap / 2  # the live policy's judges and the draft's share the report's cap

    with rehearsal():  # judges may be asked; no usage row is written
        texts = replaying.retained_texts(limit, hours=replay_hours)
        before = run_examples(select_examples(), judges=judges)
        replay_before = replaying.screen_all(texts, judges=with_judges, cost_cap=side_cap)

    def under_the_draft():
        return (run_examples(select_examples(), judges=judges),
                replaying.screen_all(texts, judges=with_judges, cost_cap=side_cap))

    left_out: dict[str, dict] = {}
    while True:
        try:
            with rehearsal():  # the draft's judges are asked between passes, outside its transaction
                _imported, (after, replay_after) = under_draft(limits.without_examples(tested, left_out)
                                                               if left_out else tested, under_the_draft)
            break
        except PolicyInvalid as exc:
            by_example, rest = limits.split_example_errors(
                exc.errors, limits.without_examples(tested, left_out) if left_out else tested)
            if rest or not by_example:
                # The changes no longer make a valid policy beyond its examples (a record they name is gone).
                report["errors"] = {**{p: m for e in by_example.values() for p, m in e.items()}, **rest}
                report["left_out"] = _left_out(left_out)
                report.update(test=None, replay=None, judges=None)
                return report
            left_out.update(by_example)  # the rest is still tested: the invalid examples are listed
    report["left_out"] = _left_out(left_out)
    report["test"] = _test_part(before, after, left_out=set(left_out))
    report["replay"] = _replay_part(texts, replay_before, replay_after, window=window, judges=with_judges,
                                    task_ids=task_ids)
    report["replay"]["with_judges"] = with_judges
    report["replay"]["without_judges"] = limits.without_judges(changes, with_judges, live, tested)
    tallies = [before.judges, after.judges, replay_before[1].as_dict(), replay_after[1].as_dict()]
    judged = min(_judged(replay_before[0]), _judged(replay_after[0]))
    # Only the cap stops a replay's judges early; a text not screened at all (its configuration gone) is not.
    stopped = with_judges and cap > 0 and any(s.capped for r in (replay_before, replay_after) for s in r[0].values())
    report["judges"] = {"mode": judges, "replay": with_judges,
                        "calls": sum(t["calls"] for t in tallies),
                        "cached": sum(t["cache_hits"] for t in tallies),
                        "cost": f"{sum(t['cost'] for t in tallies):.6f}",
                        "cost_cap": f"{cap:.2f}" if with_judges else None,
                        "texts_judged": judged if with_judges else 0, "stopped_at_cap": stopped,
                        "sentence": limits.judged_sentence(len(texts), judged, cap, stopped)}
    return report


def _judged(results: dict) -> int:
    return sum(1 for screened in results.values() if screened.judged)


def _left_out(by_example: dict[str, dict]) -> list[dict]:
    return [{"example": name, "errors": errors} for name, errors in sorted(by_example.items())]


def _state(result) -> str:
    if result is None:
        return "absent"
    return "passed" if result.passed else ("error" if result.error else "failed")


def _test_part(before, after, *, left_out: set = frozenset()) -> dict:
    live, draft = before.as_dict(), after.as_dict()
    draft["policy_version"] = None  # the draft's stand-in number is no version anyone can name
    changed = []
    for name in sorted({e.name for e in before.examples} | {e.name for e in after.examples}):
        was, will = _state(before.result_of(name)), _state(after.result_of(name))
        if name in left_out:
            will = "left_out"  # invalid under the draft (report["left_out"]), so not tested
        if was != will:
            changed.append({"example": name, "live": was, "draft": will})
    regressions = [c["example"] for c in changed
                   if c["live"] == "passed" and c["draft"] not in ("passed", "left_out")]
    live_rules = {r.key: r for r in before.rules}
    draft_rules = {r.key: r for r in after.rules}
    rules = []
    for key in sorted(set(live_rules) | set(draft_rules)):
        now, then = draft_rules.get(key), live_rules.get(key)
        row = now.as_dict() if now else {"rule": key, "fired": 0, "expected": 0, "precision": None,
                                         "recall": None, "true_positive": 0, "false_positive": 0,
                                         "false_negative": 0, "true_negative": 0}
        row["live"] = None if then is None else {k: then.as_dict()[k] for k in ("fired", "expected", "precision",
                                                                                "recall")}
        row["in_words"] = in_words(row)
        rules.append(row)
    return {"live": live, "draft": draft, "changed": changed, "regressions": regressions, "rules": rules}


def in_words(row: dict) -> str:
    """A rule's or term's counts over the examples under the draft, as a sentence."""
    tp, fp, expected = row["true_positive"], row["false_positive"], row["expected"]
    if expected:
        parts = [ngettext("fired on %(tp)d of %(expected)d example that expects it",
                          "fired on %(tp)d of %(expected)d examples that expect it", expected)
                 % {"tp": tp, "expected": expected}]
    elif fp:
        parts = [_("no example expects it")]
    else:
        return _("no example expects it and it fired on none")
    if fp:
        parts.append(ngettext("%(fp)d example fired where it should not", "%(fp)d examples fired where it should not",
                              fp) % {"fp": fp})
    elif expected:
        parts.append(_("never fired where it should not"))
    return "; ".join(parts)


def _replay_part(texts, before, after, *, window: dict, judges: bool, task_ids: bool) -> dict:
    compared = replaying.compare(before, after, judges=judges)
    if not task_ids:
        counts = compared.as_counts()
        return {"window": window, "screened": counts["replayed"], **counts}
    before, after = before[0], after[0]
    changed = []
    for item in texts:
        old, new = before.get(item.task_id), after.get(item.task_id)
        if old is None or new is None or old.outcome is None or new.outcome is None:
            continue
        if old.outcome == new.outcome and old.keys == new.keys:
            continue
        rules = {"new": sorted(new.keys - old.keys), "lost": sorted(old.keys - new.keys)}
        spans = _passages(item.text, [*rules["new"], *rules["lost"]], old, new)
        changed.append({"task_id": item.task_id, "before": old.outcome, "after": new.outcome, "rules": rules,
                        "passage": spans[0] if spans else None, "passages": spans})
    return {"window": window, "screened": compared.replayed, "changed": changed, "counts": compared.counts,
            "rules": {key: {"new": len(v["new"]), "lost": len(v["lost"])} for key, v in sorted(compared.by_rule.items())},
            "not_screened": len(compared.not_screened), "judge_calls": compared.judge_calls}


def _passages(text: str, keys: list[str], old, new) -> list[dict]:
    """Where the changed rules and terms sit in the text: offsets only, leftmost first."""
    spans: set[tuple[int, int]] = set()
    for key in keys:
        parts = key.split(":", 2)
        if parts[0] == "term_list" and len(parts) == 3:
            spans.update(matches_outside(parts[2], None, text))
        else:
            spans.update(old.spans.get(parts[0], ()))
            spans.update(new.spans.get(parts[0], ()))
    return [{"start": start, "end": end} for start, end in sorted(spans)[:MAX_PASSAGES]]
