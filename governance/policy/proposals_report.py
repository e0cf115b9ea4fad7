"""A draft's report (SPEC §12.5): the one JSON document the admin's draft page, the API and
`manage.py policy_draft` all show — its changes as a diff in policy-file terms, the conflicts, the examples
under the live policy and under the draft with precision and recall per rule and term in words, the replay
of the retained texts of a window, and what the judges cost.

Nothing is written: the draft is in force only inside `drafts.draft_policy`, rolled back. The replay names
tasks by their full id with the offsets of the passage that changed, never a text; for readers who may not
open every task (administrator consumers of the API) `task_ids=False` gives counts only, as a dry run over
the API does (`replay.ReplayReport.as_counts`).
"""
from __future__ import annotations

import difflib

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from governance.models import PolicyDraft, PolicyVersion
from governance.policy import PolicyInvalid, export_policy
from governance.policy import replay as replaying
from governance.policy.drafts import draft_policy
from governance.policy.dump import to_yaml
from governance.policy.proposals import draft_document, revision_of
from governance.policy.testing import JUDGE_MODES, run_examples, select_examples
from governance.runs.rehearsal import rehearsal
from termlists.matcher import matches_outside

# A window in hours replays at most this many texts (newest first).
MAX_WINDOW_TASKS = 10_000
# Passages listed per changed text (the first is `passage`).
MAX_PASSAGES = 5


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
        "schedule_failure": draft.schedule_failure or None,
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
                 replay_hours: float | None = None, judges: str = "skip", replay_judges: bool = False,
                 cost_cap: float | None = None, task_ids: bool = True) -> dict:
    """The draft's report (shape in docs/releases.md, "Drafts"). With `replay_hours`, the window is the
    retained texts of the last hours (at most MAX_WINDOW_TASKS); else the last `replay_tasks` tasks."""
    if judges not in JUDGE_MODES:
        raise ValueError(f"judges must be one of {JUDGE_MODES}")
    live = export_policy()
    live_version = PolicyVersion.current()
    document, conflicts = draft_document(draft, live)
    report = {
        "draft": draft_facts(draft),
        "changes": [{"section": c["section"], "name": c["name"], "action": c["action"]} for c in draft.changes],
        "diff": diff_text(live, document, live_version=live_version, draft_id=draft.pk),
        "conflicts": [c.as_dict() for c in conflicts],
        "errors": {},
    }
    if replay_hours is not None:
        window, limit = {"hours": replay_hours}, MAX_WINDOW_TASKS
    else:
        window, limit = {"tasks": replay_tasks or 0}, replay_tasks or 0
    cap = float(cost_cap or 0.0)
    try:
        with rehearsal():  # judges may be asked; no usage row is written
            texts = replaying.retained_texts(limit, hours=replay_hours)
            before = run_examples(select_examples(), judges=judges)
            replay_before = replaying.screen_all(texts, judges=replay_judges, cost_cap=cap)
            with draft_policy(document, prune=True):
                after = run_examples(select_examples(), judges=judges)
                replay_after = replaying.screen_all(texts, judges=replay_judges, cost_cap=cap)
    except PolicyInvalid as exc:
        # The changes no longer make a valid policy (a record they name is gone): nothing to test.
        report["errors"] = exc.errors
        report.update(test=None, replay=None, judges=None)
        return report
    report["test"] = _test_part(before, after)
    report["replay"] = _replay_part(texts, replay_before, replay_after, window=window, judges=replay_judges,
                                    task_ids=task_ids)
    tallies = [before.judges, after.judges, replay_before[1].as_dict(), replay_after[1].as_dict()]
    report["judges"] = {"mode": judges, "replay": replay_judges,
                        "calls": sum(t["calls"] for t in tallies),
                        "cached": sum(t["cache_hits"] for t in tallies),
                        "cost": f"{sum(t['cost'] for t in tallies):.6f}"}
    return report


def _state(result) -> str:
    if result is None:
        return "absent"
    return "passed" if result.passed else ("error" if result.error else "failed")


def _test_part(before, after) -> dict:
    live, draft = before.as_dict(), after.as_dict()
    draft["policy_version"] = None  # the draft's stand-in number is no version anyone can name
    changed = []
    for name in sorted({e.name for e in before.examples} | {e.name for e in after.examples}):
        was, will = _state(before.result_of(name)), _state(after.result_of(name))
        if was != will:
            changed.append({"example": name, "live": was, "draft": will})
    regressions = [c["example"] for c in changed if c["live"] == "passed" and c["draft"] != "passed"]
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
