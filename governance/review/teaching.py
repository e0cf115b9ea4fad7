"""Editors teach the policy (SPEC §10.2): a hint marked right or wrong, a rule or term reported missed.

Feedback is stored as facts only — check, list and term, snippet and rule line, or pattern identifier,
verdict, editor, time — on a HintFeedback row and as a governance event (`decision: feedback`).
Never a passage: the row must outlive the task purge. Changeable until the task's review is final.
"""
from __future__ import annotations

import json

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.errors import BadInput, Conflict
from governance.models import GovernanceEvent, HintFeedback, Task, finding_of, Configuration
from governance.screening.pipeline import write_events
from governance.review.rule_stats import FIRED_CHECKS, _fired_keys

RIGHT, WRONG, MISSED = HintFeedback.Verdict.RIGHT, HintFeedback.Verdict.WRONG, HintFeedback.Verdict.MISSED
FACT_FIELDS = ("check_name", "list_name", "term", "snippet", "rule")
JUDGED_CHECKS = ("term_list", "rules_judge", "pattern_rules", "citations", "field")


def is_final(task: Task) -> bool:
    """A task's review is final once it was accepted or rejected: feedback is closed then."""
    return bool(task.review_decision)


def hint_facts(hint: dict) -> list[dict]:
    """The findings a hint stands for, as feedback facts: a term-list hint one per term it names, a rule
    hint its snippet and line (or pattern identifier). A hint that says a check did not run stands for
    no finding (there is nothing to call right or wrong)."""
    if not isinstance(hint, dict) or hint.get("type") == "not_checked" or hint.get("check") not in JUDGED_CHECKS:
        return []
    check = hint["check"]
    if check == "term_list":
        terms = [t for t in hint.get("terms") or () if isinstance(t, str)]
        return [_facts(check, list_name=str(hint.get("list") or ""), term=term) for term in terms]
    rule = hint.get("rule") if isinstance(hint.get("rule"), dict) else {}
    if check == "rules_judge":
        line = rule.get("line_no") or rule.get("number")
        return [_facts(check, snippet=str(rule.get("snippet") or ""), rule=str(line or ""))]
    if check in ("pattern_rules", "citations"):
        return [_facts(check, rule=str(rule.get("identifier") or ""))]
    return [_facts(check)]


def _facts(check: str, **values) -> dict:
    facts = {"check_name": check, "list_name": "", "term": "", "snippet": "", "rule": ""}
    facts.update({k: v[:500] for k, v in values.items()})
    return facts


def hint_rows(task: Task) -> list[tuple[int, list[dict]]]:
    """(hint index, facts) for every hint of the task that stands for a finding."""
    hints = task.hints if isinstance(task.hints, list) else []
    return [(index, facts) for index, hint in enumerate(hints) if (facts := hint_facts(hint))]


def missed_choices(task: Task) -> list[tuple[str, str]]:
    """What an editor may say the policy missed on this task: the forbidden terms of the lists of the
    task's configurations, the lines of their rule sets, the active pattern rules. (value, label)."""
    from judging.rulesets import rule_sets_for
    from snippets.models import PatternRule
    from termlists.matcher import parse_entries
    from termlists.models import TermList

    identifiers = [task.configuration, *[c for c in (task.also or []) if isinstance(c, str)]]
    configurations = list(Configuration.objects.filter(identifier__in=identifiers))
    choices = []
    lists = TermList.objects.filter(configurations__in=configurations, is_active=True).distinct().order_by("name")
    for term_list in lists.only("name", "forbidden"):
        for term, _suggestion in parse_entries(term_list.forbidden):
            choices.append((_facts("term_list", list_name=term_list.name, term=term),
                            _("List “%(list)s”: %(term)s") % {"list": term_list.name, "term": term}))
    seen = set()
    for rule_set in rule_sets_for(configurations):
        for rule in rule_set.rules:
            if (rule.snippet, rule.line_no) in seen:
                continue
            seen.add((rule.snippet, rule.line_no))
            choices.append((_facts("rules_judge", snippet=rule.snippet, rule=str(rule.line_no)),
                            _("Rule “%(line)s” (snippet %(snippet)s)") % {"line": rule.line, "snippet": rule.snippet}))
    for identifier, statement in PatternRule.objects.filter(is_active=True).order_by("identifier").values_list(
            "identifier", "statement"):
        choices.append((_facts("pattern_rules", rule=identifier),
                        _("Pattern rule %(identifier)s: %(statement)s") % {"identifier": identifier,
                                                                           "statement": statement}))
    return [(encode(facts), label) for facts, label in choices]


def encode(facts: dict) -> str:
    """A finding as a form value (and back with `decode`)."""
    return json.dumps([facts[name] for name in FACT_FIELDS], ensure_ascii=False)


def decode(value: str) -> dict | None:
    try:
        items = json.loads(value)
    except (TypeError, ValueError):
        return None
    if not isinstance(items, list) or len(items) != len(FACT_FIELDS) or not all(isinstance(i, str) for i in items):
        return None
    return dict(zip(FACT_FIELDS, items))


def verdicts(task: Task) -> dict[str, str]:
    """The task's feedback so far: encoded finding -> verdict."""
    rows = HintFeedback.objects.filter(task=task).values_list(*FACT_FIELDS, "verdict")
    return {encode(dict(zip(FACT_FIELDS, row[:-1]))): row[-1] for row in rows}


def fired(task: Task) -> set[str]:
    """The findings the task's screening recorded (encoded), read from its governance events: facts only."""
    if not task.correlation_id:
        return set()
    rows = (GovernanceEvent.objects.filter(correlation_id=task.correlation_id, check_name__in=FIRED_CHECKS,
                                           decision__in=("blocked", "reported"))
            .values_list("check_name", "detail").order_by())
    return {encode(dict(zip(FACT_FIELDS, key))) for check, detail in rows for key, _line in _fired_keys(check, detail)}


def mark(task: Task, values: list[str], verdict: str, *, user) -> list[HintFeedback]:
    """Mark what one hint found right or wrong: `values` are its findings (encoded), each one the task's
    screening recorded. Reads no text of the task: the findings are checked against its events."""
    if verdict not in (RIGHT, WRONG):
        raise BadInput(_("Choose right or wrong."), fields={"verdict": [_("Choose right or wrong.")]})
    found = fired(task)
    if not values or any(value not in found for value in values):
        raise BadInput(_("This hint names no rule or term to mark."))
    return [_record(task, decode(value), verdict, user=user) for value in values]


def report_missed(task: Task, value: str, *, user) -> HintFeedback:
    """Say the policy missed one of the task's `missed_choices` (a false negative)."""
    facts = decode(value)
    if facts is None or value not in {v for v, _label in missed_choices(task)}:
        raise BadInput(_("Choose a rule or a term of this task's configurations."))
    return _record(task, facts, MISSED, user=user)


def _record(task: Task, facts: dict, verdict: str, *, user) -> HintFeedback:
    with transaction.atomic():
        # The row lock makes "not final yet" and the write one step: a review landing in between waits.
        locked = Task.objects.select_for_update().only("id", "review_decision").get(pk=task.pk)
        if is_final(locked):
            raise Conflict(_("This task's review is final; its feedback can no longer change."),
                           code="review_final")
        feedback, _created = HintFeedback.objects.update_or_create(
            task=task, **facts, defaults={"verdict": verdict, "editor": user, "at": timezone.now()})
        finding = feedback.finding()
        write_events([{
            "correlation_id": task.correlation_id or str(task.pk), "decision": "feedback",
            "check_name": facts["check_name"], "configuration": task.configuration,
            "provider": "", "model": "",
            "actor": f"user:{user.get_username()}"[:150], "mode": "",
            "detail": {"task": str(task.pk), "verdict": verdict, **{k: v for k, v in finding.items() if k != "check"}},
        }])
    return feedback


def expectation(task: Task) -> dict:
    """What keeping this reviewed task as an example expects (SPEC §10.2): an accepted text with no hint
    marked wrong → its outcome; a hint marked wrong → that finding absent; a missed rule → that finding
    expected (and the text then blocked or hinted, as a finding implies)."""
    rows = list(HintFeedback.objects.filter(task=task).order_by("at", "pk"))
    wrong = [row.finding() for row in rows if row.verdict == WRONG]
    missed = [row.finding() for row in rows if row.verdict == MISSED]
    right = [row.finding() for row in rows if row.verdict == RIGHT]
    outcome = task.outcome or "allowed"
    if wrong or missed:
        # The outcome the text should have: what still stands (right and unmarked findings, as the task
        # found them) plus what was missed, which blocks when the list or the rules enforce.
        standing = right + _unmarked_findings(task, rows)
        if missed and any(_blocks(task, finding) for finding in missed):
            outcome = "blocked"
        elif standing or missed:
            outcome = "blocked" if outcome == "blocked" and standing else "allowed_with_hints"
        else:
            outcome = "allowed"
    return {"outcome": outcome, "findings": _unique(right + missed), "absent": _unique(wrong)}


def _blocks(task: Task, finding: dict) -> bool:
    """Whether a finding the policy missed would stop the text: a block-mode list, or rules in block mode."""
    from termlists.models import TermList

    if finding["check"] == "term_list":
        return TermList.objects.filter(name=finding.get("list"), mode=TermList.Mode.BLOCK).exists()
    configuration = Configuration.objects.filter(identifier=task.configuration).only("rule_mode").first()
    return configuration is not None and configuration.rule_mode == "block"


def _unmarked_findings(task: Task, rows) -> list[dict]:
    marked = {tuple(getattr(row, name) for name in FACT_FIELDS) for row in rows}
    found = []
    for _index, facts in hint_rows(task):
        for fact in facts:
            if tuple(fact[name] for name in FACT_FIELDS) not in marked:
                found.append(finding_of(fact["check_name"], list_name=fact["list_name"], term=fact["term"],
                                        snippet=fact["snippet"], rule=fact["rule"]))
    return found


def _unique(findings: list[dict]) -> list[dict]:
    seen, result = set(), []
    for finding in findings:
        key = json.dumps(finding, sort_keys=True)
        if key not in seen:
            seen.add(key)
            result.append(finding)
    return result
