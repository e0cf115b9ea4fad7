"""Checks that did not run on a task, in words (issue 29): a text under the finished-text floor
(SPEC §3, §6.8) skips the judges and pattern rules, and the review must not read that silence as a pass.

Read from the task's `checks` (each check with its result and reason, as the screening recorded them)
and its "not checked" hints. Pure but for `not_run_q`, the queue filter's condition.
"""
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from governance.messages import reason_text
from governance.screening.text import FINISHED_TEXT_MIN_WORDS

# Why a check that applies to the text did not run. Reasons meaning "nothing to check here"
# (mode off, no rules, no list, no citations) are not silence about the text and are not listed.
NOT_RUN_REASONS = {
    "not_finished_text": _("the text is shorter than %(words)d words, too short to judge"),
    "earlier_block": _("an earlier check stopped the text"),
    "escalated": _("the answer was escalated to another model"),
    "judges_skipped": _("judges were skipped for this run"),
    "table_missing": _("the term lists could not be read"),
    "no_verdict": _("no verdict came back"),
}


def check_names():
    return {
        "term_list": _("Term lists"), "rules_judge": _("Judges (rules)"), "pattern_rules": _("Pattern rules"),
        "citations": _("Citations"), "field": _("Field length"), "secret_redaction": _("Secret redaction"),
    }


def reason_words(code: str) -> str:
    """Why a check did not run, in words (the code itself when it has none)."""
    text = NOT_RUN_REASONS.get(code)
    if text is None:
        return code
    return str(text) % {"words": FINISHED_TEXT_MIN_WORDS} if code == "not_finished_text" else str(text)



def not_run(checks, hints=()) -> list[dict]:
    """The checks that did not run, one entry per reason: {"reason", "checks": [names], "words"}.

    A "not checked" hint (a judge that timed out, …) counts too: its rules did not get a verdict."""
    names = check_names()
    grouped: dict[str, list[str]] = {}
    words: dict[str, str] = {}
    for entry in checks if isinstance(checks, list) else ():
        if not isinstance(entry, dict) or entry.get("result") != "skipped":
            continue
        code = str(entry.get("reason") or "")
        if code not in NOT_RUN_REASONS:
            continue
        name = str(names.get(entry.get("check"), entry.get("check", "")))
        grouped.setdefault(code, [])
        if name not in grouped[code]:
            grouped[code].append(name)
        words[code] = reason_words(code)
    for hint in hints if isinstance(hints, list) else ():
        if isinstance(hint, dict) and hint.get("type") == "not_checked":
            code = "hint:" + str(hint.get("reason") or "")
            name = str(names.get(hint.get("check"), hint.get("check", "")))
            grouped.setdefault(code, [])
            if name not in grouped[code]:
                grouped[code].append(name)
            words[code] = reason_text(hint["reason"]) if hint.get("reason") else str(_("no reason given"))
    return [{"reason": code.removeprefix("hint:"), "checks": checks_, "words": words[code]}
            for code, checks_ in grouped.items()]


def summary(entries: list[dict]) -> str:
    """One line for the queue row: "Did not run: Judges (rules), Pattern rules — the text is …"."""
    return "; ".join(_("%(checks)s did not run: %(why)s") % {"checks": ", ".join(e["checks"]), "why": e["words"]}
                     for e in entries)


def not_run_q() -> Q:
    """Tasks where some check did not run: a skipped check with one of NOT_RUN_REASONS, or a
    "not checked" hint. Text search over the JSON (both databases cast it to text)."""
    condition = Q(hints__icontains='"not_checked"')
    for code in NOT_RUN_REASONS:
        condition |= Q(checks__icontains=f'"{code}"')
    return condition


def has_hints_q() -> Q:
    """Tasks delivered with at least one hint (a hint always has a `check`)."""
    return Q(hints__icontains='"check"')
