"""Evidence in plain words (issue 43): an evidence record's codes (`allowed_with_hints`, `term_list` ·
`passed`, `"review": null`) as an administrator who is not an engineer reads them, in their language.

The codes stay in the database, the API and the exports; the admin's pages show these words.
"""
from django.utils.dateparse import parse_datetime
from django.utils.formats import date_format
from django.utils.timezone import localtime
from django.utils.translation import gettext as _

from governance.messages import NOT_CHECKED_REASONS
from governance.models import EvidenceRecord


def outcome_words(code: str) -> str:
    words = {"allowed": _("delivered"), "allowed_with_hints": _("delivered with hints"), "blocked": _("stopped")}
    return words.get(code, code or "—")


def surface_words(code: str) -> str:
    return str(dict(EvidenceRecord.Surface.choices).get(code, code or "—"))


def verification_words(code: str) -> str:
    words = {"verified": _("citations verified"), "unverified": _("citations not verified"),
             "not_applicable": _("no citations to verify")}
    return words.get(code, code or "—")


def check_name(code: str) -> str:
    names = {"term_list": _("Term lists"), "rules_judge": _("Judges (rules)"), "pattern_rules": _("Pattern rules"),
             "citations": _("Citations"), "field": _("Field length"), "secret_redaction": _("Secret redaction"),
             "read_tools": _("Tools the model read")}
    return names.get(code, code)


def result_words(code: str) -> str:
    words = {"passed": _("passed"), "reported": _("found something; the text was delivered with hints"),
             "blocked": _("stopped the text"), "not_checked": _("could not check"), "skipped": _("did not run"),
             "redacted": _("masked secret-shaped values"), "screened": _("screened"), "dropped": _("left out")}
    return words.get(code, code)


def reason_words(code: str) -> str:
    words = {"not_finished_text": _("the text is shorter than 30 words, too short to judge"),
             "mode_off": _("switched off"), "no_rules": _("no rules apply"), "no_list": _("no term list applies"),
             "no_citations": _("the text cites nothing"), "earlier_block": _("an earlier check stopped the text"),
             "escalated": _("the answer was escalated to another model"),
             "judges_skipped": _("judges were skipped for this run"),
             "table_missing": _("the term lists could not be read"), "no_verdict": _("no verdict came back"),
             "deferred": _("left for later"), "check_failed": _("the check failed"),
             "not_declared": _("not declared")}
    if code in words:
        return words[code]
    return str(NOT_CHECKED_REASONS[code]) if code in NOT_CHECKED_REASONS else code


def check_line(check: dict) -> str:
    """One check as a sentence: "Judges (rules): did not run — the text is shorter than 30 words, …"."""
    line = _("%(check)s: %(result)s") % {"check": check_name(str(check.get("check", ""))),
                                          "result": result_words(str(check.get("result", "")))}
    if check.get("reason"):
        line = _("%(line)s — %(reason)s") % {"line": line, "reason": reason_words(str(check["reason"]))}
    return line


def when(moment) -> str:
    if isinstance(moment, str):
        moment = parse_datetime(moment)
    return date_format(localtime(moment), "DATETIME_FORMAT") if moment else "—"


def review_words(decision: str, by: str, at, edited: bool) -> str:
    """The human review in a sentence; no review is said as such ("not reviewed"), never `null`."""
    if not decision:
        return _("not reviewed by a person")
    if edited:
        return _("accepted by %(by)s on %(at)s, after editing the text") % {"by": by or "—", "at": when(at)}
    return _("accepted by %(by)s on %(at)s, unchanged") % {"by": by or "—", "at": when(at)}


def record_words(record: dict) -> dict:
    """A record (export.as_json's shape, with datetimes) in words, for a page."""
    review = record.get("review") or {}
    also = ", ".join(record.get("also") or [])
    return {
        "id": record["id"], "at": when(record["at"]), "surface": surface_words(record["surface"]),
        "configuration": record["configuration"] + (f" (+ {also})" if also else ""),
        "policy_version": record["policy_version"] if record["policy_version"] is not None else "—",
        "outcome": outcome_words(record["outcome"]), "checks": [check_line(c) for c in record.get("checks") or []],
        "verification": verification_words(record.get("verification", "")),
        "review": review_words(review.get("decision", ""), review.get("by", ""), review.get("at"),
                               bool(review.get("edited"))),
        "reviewed": bool(review.get("decision")), "task": record.get("task"),
    }
