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

A finding an example cannot expect, or that a policy test would never find again, is left out of the
expectation, and `plan` says which and why in `left_out` (decision 0054): the field length check (an
example has no field, so no length limit) and secret redaction (no finding an example names; the kept
text is already masked). Without them the example expects what a policy test of its text finds.
"""
from __future__ import annotations

import json

from django.utils.translation import gettext as _

from governance.models import HintFeedback, Task, finding_of
from governance.policy.examples import CHECKS as EXAMPLE_CHECKS
from governance.review.teaching import MISSED, RIGHT, WRONG, _blocks, decode, fired, hint_facts, hint_rows

# Checks whose findings an example's expectation can name but a policy test never finds again: a policy
# test screens the example's text without a field, so the field length check does not run.
NOT_REPRODUCED = ("field",)


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
    """A finding in words, as the page and the warnings name it (after "the"), for every check a screening
    records: term list, pattern rule, citation, judge, field length, secret redaction."""
    check = finding.get("check")
    if check == "term_list":
        return _("term “%(term)s” of the list “%(list)s”") % {"term": finding.get("term", ""),
                                                               "list": finding.get("list", "")}
    if check == "rules_judge":
        return _("rule line %(rule)s of the snippet %(snippet)s") % {"rule": finding.get("rule", ""),
                                                                    "snippet": finding.get("snippet", "")}
    if check == "pattern_rules":
        return _("pattern rule %(rule)s") % {"rule": finding.get("rule", "")}
    if check == "citations":
        return _("citation [rule:%(rule)s]") % {"rule": finding.get("rule", "")}
    if check == "field":
        return _("field length check (a value longer than the field's max_length)")
    if check == "secret_redaction":
        return _("secret redaction (key- or token-shaped values masked)")
    return _("finding of the check %(check)s") % {"check": check or "?"}


def kept_in_example(finding: dict) -> bool:
    """Whether an example's expectation keeps this finding: one it can name that a policy test finds again."""
    return finding.get("check") in EXAMPLE_CHECKS and finding.get("check") not in NOT_REPRODUCED


def left_out_reason(finding: dict) -> str:
    """Why an example leaves this finding out of its expectation, in words."""
    check = finding.get("check")
    if check == "field":
        return _("an example has no field and so no length limit: a policy test never runs the field length "
                 "check on it, and an example expecting this finding would fail at once")
    if check == "secret_redaction":
        return _("an example's expectation cannot name secret redaction, and the kept text is stored with its "
                 "secrets already masked")
    return _("an example's expectation cannot name a finding of this check")


def _reproduced_outcome(task: Task, outcome: str) -> str:
    """The task's outcome as a policy test would screen its text: `allowed_with_hints` that rests only on
    hints an example leaves out (a too-long field value) comes back as `allowed`."""
    hints = [h for h in task.hints if isinstance(h, dict)] if isinstance(task.hints, list) else []
    if outcome != "allowed_with_hints" or not hints:
        return outcome
    only_left_out = all((facts := hint_facts(hint)) and not any(kept_in_example(_finding(f)) for f in facts)
                        for hint in hints)
    return "allowed" if only_left_out else outcome


def plan(task: Task) -> dict:
    """{text, outcome, findings, absent, source, warnings, left_out}: what keeping this reviewed task would
    save, and what it leaves out of the expectation (each with why)."""
    rows = list(HintFeedback.objects.filter(task=task).order_by("at", "pk"))
    by_verdict = {verdict: _unique(row.finding() for row in rows if row.verdict == verdict)
                  for verdict in (RIGHT, WRONG, MISSED)}
    rejected = task.review_decision == Task.Review.REJECTED
    original = bool(by_verdict[MISSED]) or rejected or not task.edited
    text = task.answer if original else task.edited_text
    if not original:
        found_all = current_findings(task)
        own_outcome = _reproduced_outcome(task, task.outcome or "allowed")
    else:
        found_all = original_findings(task) if task.edited else (current_findings(task) or original_findings(task))
        own_outcome = _reproduced_outcome(task, task.outcome or "allowed") if not task.edited else (
            "allowed_with_hints" if any(kept_in_example(f) for f in found_all) else "allowed")
    # What the example cannot expect is left out everywhere, and said (decision 0054).
    left_out = _unique(f for f in [*found_all, *by_verdict[RIGHT], *by_verdict[WRONG], *by_verdict[MISSED]]
                       if not kept_in_example(f))
    found = [f for f in found_all if kept_in_example(f)]
    right, wrong, missed = ([f for f in by_verdict[v] if kept_in_example(f)] for v in (RIGHT, WRONG, MISSED))
    found_keys = {_key(f) for f in found}
    wrong_keys = {_key(f) for f in by_verdict[WRONG]}
    standing = [f for f in found if _key(f) not in wrong_keys]
    # The review rejected what only a left-out finding caught (a value too long for its field): the policy
    # did flag it, but a policy test of the example would not, so the example expects what the test finds.
    caught_only_by_left_out = (rejected and not standing and not missed and own_outcome != "blocked"
                               and any(_key(f) not in wrong_keys for f in found_all if not kept_in_example(f)))
    right_here = [f for f in right if _key(f) in found_keys]
    blocks = any(_blocks(task, f) for f in missed)
    if blocks or (own_outcome == "blocked" and standing):
        outcome = "blocked"
    elif caught_only_by_left_out:
        outcome = own_outcome
    elif rejected or standing or missed:
        outcome = "allowed_with_hints"
    elif not wrong:
        outcome = own_outcome
    else:
        outcome = "allowed"
    outcome_words = {"allowed": _("delivered"), "allowed_with_hints": _("delivered with hints"),
                     "blocked": _("blocked")}
    warnings = []
    for finding in wrong:
        if _key(finding) in found_keys:
            warnings.append(_("The current policy finds the %(finding)s; this example expects it absent, so "
                              "policy tests fail on it until the policy changes.") % {"finding": describe(finding)})
    for finding in missed:
        warnings.append(_("The current policy does not find the %(finding)s; this example expects it, so policy "
                          "tests fail on it until the policy finds it.") % {"finding": describe(finding)})
    if rejected and not standing and not missed and not caught_only_by_left_out:
        warnings.append(_("The review rejected this text but the current policy gave it no hint; this example "
                          "expects hints, so policy tests fail on it until a rule catches it. Report the rule it "
                          "missed to say which."))
    left_out_notes = [{"check": f["check"], "words": describe(f), "reason": left_out_reason(f),
                       "text": _("Left out of the example: the %(finding)s. Why: %(reason)s.") % {
                           "finding": describe(f), "reason": left_out_reason(f)}} for f in left_out]
    if caught_only_by_left_out:
        left_out_notes.append({"check": "", "words": "", "reason": "", "text": _(
            "The review rejected this text for what only the left-out check finds, so the example expects what a "
            "policy test of the text finds: %(outcome)s.") % {"outcome": outcome_words[outcome]}})
    findings = _unique(right_here + missed)
    return {"text": text, "outcome": outcome, "findings": findings, "absent": wrong,
            "source": "answer" if original else "edit", "warnings": warnings, "left_out": left_out_notes,
            "outcome_words": outcome_words[outcome],
            "findings_words": [describe(f) for f in findings], "absent_words": [describe(f) for f in wrong]}
