"""Why the worker did not publish a draft at its set time, kept as a code and its facts (a small JSON in
`PolicyDraft.schedule_failure`) so the draft's page and the notice say it in the reader's language.

A row written before the code was kept holds the text in the worker's language: it is shown as it is.
"""
from __future__ import annotations

import json

from django.utils.translation import gettext_lazy as _

from governance.policy.draft_refusals import MSG_DRAFT_CHANGED, MSG_DRAFT_CONFLICTS, MSG_DRAFT_INVALID
from governance.policy.release import MSG_EXAMPLES_REGRESSED

MAX_CHARS = 1000  # the field's length
UNEXPECTED = "unexpected"

# The sentences are the refusals' own (the same words an approver publishing in person reads).
MESSAGES = {
    "draft_conflicts": MSG_DRAFT_CONFLICTS,
    "draft_changed": MSG_DRAFT_CHANGED,
    "examples_regressed": MSG_EXAMPLES_REGRESSED,
    "invalid_policy": MSG_DRAFT_INVALID,
    "draft_status": _("The draft is no longer open or submitted, so the worker did not publish it."),
    # Never the exception's text: that is for the server's log (with the draft's id), not for a person.
    UNEXPECTED: _("Publishing failed on an unexpected error; the server's log has the details. Publish the draft "
                  "in person or set a new time; if it fails again, give an administrator the draft's id."),
}


def _names(names) -> dict:
    names = [str(n) for n in names or ()]
    return {"count": len(names), "names": ", ".join(names)}


def failure_facts(code: str, exc=None, fields: dict | None = None) -> dict:
    """The code and the facts its sentence needs, from the refusal `exc` (`fields`: the named paths of an
    invalid policy)."""
    if code == "draft_conflicts":
        return {"code": code, **_names(f"{c.section}:{c.name}" for c in getattr(exc, "conflicts", ()))}
    if code == "examples_regressed":
        return {"code": code, **_names(getattr(getattr(exc, "plan", None), "regressions", ()))}
    if code == "invalid_policy":
        listed = "; ".join(f"{path}: {' '.join(map(str, messages))}" for path, messages in (fields or {}).items())
        return {"code": code, "errors": listed}
    return {"code": code if code in MESSAGES else UNEXPECTED}


def stored(facts: dict) -> str:
    """The facts as the field keeps them, within its length (the longest text is cut first)."""
    facts = dict(facts)
    text = json.dumps(facts, ensure_ascii=False, sort_keys=True)
    while len(text) > MAX_CHARS:
        key = max((k for k, v in facts.items() if isinstance(v, str) and k != "code"),
                  key=lambda k: len(facts[k]), default=None)
        if key is None:
            return json.dumps({"code": facts.get("code", UNEXPECTED)})
        facts[key] = facts[key][: max(0, len(facts[key]) - (len(text) - MAX_CHARS) - 1)] + "…"
        text = json.dumps(facts, ensure_ascii=False, sort_keys=True)
    return text


def _parsed(value: str) -> dict | None:
    if not value.startswith("{"):
        return None
    try:
        facts = json.loads(value)
    except ValueError:
        return None
    return facts if isinstance(facts, dict) and facts.get("code") in MESSAGES else None


def failure_text(value: str) -> str:
    """The stored failure in the active language; an old row's text (or anything unreadable) as stored."""
    value = value or ""
    facts = _parsed(value)
    if facts is None:
        return value
    try:
        return str(MESSAGES[facts["code"]]) % facts
    except (KeyError, TypeError, ValueError):
        return str(MESSAGES[UNEXPECTED])


def failure_code(value: str) -> str:
    """The stored failure's code ("" for an old row's text)."""
    facts = _parsed(value or "")
    return facts["code"] if facts else ""
