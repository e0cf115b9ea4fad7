"""What *keep as example* saves (SPEC §10.2, issue 29): the text the review's expectation is about, the
expectation itself, and in words what the current policy will make of it — shown before saving.

- a missed finding, or a reject: the original answer (the review judged that text);
- an accept without a missed finding: the accepted text (the edit, when there was one), expecting that
  text's own screening (its outcome; hints marked right that it still has);
- a hint marked wrong: that finding `absent`; a missed one: in `findings`;
- a reject asks for the text to be stopped or at least flagged: `blocked` when a missed finding or the
  task's own screening blocks, else `allowed_with_hints` (the review sent it back, so the policy must not
  wave it through).

Where the review says the policy is wrong (wrong, missed, a reject the policy did not flag), the example
fails policy tests on exactly that finding until the policy changes; `plan` says so in `warnings`.
"""
from __future__ import annotations

import json

from django.utils.translation import gettext as _

from governance.models import HintFeedback, Task, finding_of
from governance.review.teaching import MISSED, RIGHT, WRONG, _blocks, decode, fired, hint_rows


def _key(finding: dict) -> str:
    return json.dumps(finding, sort_keys=True)


def _unique(findings) -> list[dict]:
    seen, result = set(), []
    for finding in findings:
        if _key(finding) not in seen:
            seen.add(_key(finding))
            result.append(finding)
    return result


def _finding(facts: dict) -> dict:
    return finding_of(facts["check_name"], list_name=facts["list_name"], term=facts["term"],
                      snippet=facts["snippet"], rule=facts["rule"])


def original_findings(task: Task) -> list[dict]:
    """What the task's own screening found, from its governance events (facts only; also after an edit
    replaced the task's hints)."""
    return _unique(_finding(facts) for value in sorted(fired(task)) if (facts := decode(value)))


def current_findings(task: Task) -> list[dict]:
    """What the task's current hints stand for (the edit's, after an edited accept)."""
    return _unique(_finding(fact) for _index, facts in hint_rows(task) for fact in facts)


def describe(finding: dict) -> str:
    """A finding in words, as the page and the warnings name it."""
    if finding.get("check") == "term_list":
        return _("term “%(term)s” of the list “%(list)s”") % {"term": finding.get("term", ""),
                                                               "list": finding.get("list", "")}
    if finding.get("check") == "rules_judge":
        return _("rule line %(rule)s of the snippet %(snippet)s") % {"rule": finding.get("rule", ""),
                                                                    "snippet": finding.get("snippet", "")}
    return _("pattern rule %(rule)s") % {"rule": finding.get("rule", "")}


def plan(task: Task) -> dict:
    """{text, outcome, findings, absent, source, warnings}: what keeping this reviewed task would save."""
    rows = list(HintFeedback.objects.filter(task=task).order_by("at", "pk"))
    by_verdict = {verdict: _unique(row.finding() for row in rows if row.verdict == verdict)
                  for verdict in (RIGHT, WRONG, MISSED)}
    right, wrong, missed = by_verdict[RIGHT], by_verdict[WRONG], by_verdict[MISSED]
    rejected = task.review_decision == Task.Review.REJECTED
    original = bool(missed) or rejected or not task.edited
    text = task.answer if original else task.edited_text
    if not original:
        found = current_findings(task)
        own_outcome = task.outcome or "allowed"
    else:
        found = original_findings(task) if task.edited else (current_findings(task) or original_findings(task))
        own_outcome = (task.outcome or "allowed") if not task.edited else (
            "allowed_with_hints" if found else "allowed")
    found_keys = {_key(f) for f in found}
    wrong_keys = {_key(f) for f in wrong}
    standing = [f for f in found if _key(f) not in wrong_keys]
    right_here = [f for f in right if _key(f) in found_keys]
    blocks = any(_blocks(task, f) for f in missed)
    if blocks or (own_outcome == "blocked" and standing):
        outcome = "blocked"
    elif rejected or standing or missed:
        outcome = "allowed_with_hints"
    elif not wrong:
        outcome = own_outcome
    else:
        outcome = "allowed"
    warnings = []
    for finding in wrong:
        if _key(finding) in found_keys:
            warnings.append(_("The current policy finds the %(finding)s; this example expects it absent, so "
                              "policy tests fail on it until the policy changes.") % {"finding": describe(finding)})
    for finding in missed:
        warnings.append(_("The current policy does not find the %(finding)s; this example expects it, so policy "
                          "tests fail on it until the policy finds it.") % {"finding": describe(finding)})
    if rejected and not standing and not missed:
        warnings.append(_("The review rejected this text but the current policy gave it no hint; this example "
                          "expects hints, so policy tests fail on it until a rule catches it. Report the rule it "
                          "missed to say which."))
    findings = _unique(right_here + missed)
    return {"text": text, "outcome": outcome, "findings": findings, "absent": wrong,
            "source": "answer" if original else "edit", "warnings": warnings,
            "outcome_words": {"allowed": _("delivered"), "allowed_with_hints": _("delivered with hints"),
                              "blocked": _("blocked")}[outcome],
            "findings_words": [describe(f) for f in findings], "absent_words": [describe(f) for f in wrong]}

