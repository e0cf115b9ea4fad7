"""Every message a person reads, in one place, translatable (SPEC §1).

Messages are rendered from policy facts in the reader's language; the
governance log keeps only the facts.
"""
from contextlib import nullcontext
from dataclasses import dataclass

from django.utils import translation
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

NOT_CHECKED_REASONS = {
    "timeout": _("the judge did not answer in time"),
    "error": _("the judge could not be reached"),
    "unusable": _("the judge's answer could not be used"),
    "no_judge": _("no judge is configured"),
    "zone": _("no judge may read this text (trust zone)"),
    "uncertain": _("the judge was not confident enough"),
    "undecided": _("the judge could not decide"),
    "budget": _("the judge's configuration has reached its budget for today"),
    "injection": _("the text imitates the markers that separate it from the judge's instructions"),
}

TERM_FORBIDDEN = _("The term list “%(list)s” does not allow: %(terms)s.")
TERM_SUGGESTION = _("Instead of “%(term)s”, write “%(suggestion)s”.")
TERM_MISSING = _("The term list “%(list)s” requires: %(terms)s.")
TERM_CHECK_FAILED = _("The term lists could not be checked, so the text was stopped.")
TERM_REPORTED_SUFFIX = _("(report mode: the text was delivered)")
TERM_REPORTED_STOPPED_SUFFIX = _("(report mode: this list did not stop the text; another check did)")
TOOL_CHANGE_NOT_PROPOSED = _("The change was not proposed.")
RULE_VIOLATION = _("Rule %(number)d (“%(line)s”, snippet %(snippet)s) is violated by: “%(passage)s”.")
RULE_VIOLATION_NO_PASSAGE = _("Rule %(number)d (“%(line)s”, snippet %(snippet)s) is violated; the judge names no passage.")
RULE_VIOLATION_STORED = _("Rule %(number)d (“%(line)s”, snippet %(snippet)s) is violated.")
RULES_NOT_CHECKED = _("The rules of %(configuration)s were not checked: %(reason)s.")
RULES_NOT_CHECKED_BLOCK = _("The rules of %(configuration)s could not be checked (%(reason)s), so the text was stopped.")
SECRETS_REDACTED = _("%(count)d secret-shaped value(s) were masked.")


def render(message, language: str | None = None, **facts) -> str:
    """Render a message constant with facts, in `language` (or the active language)."""
    with translation.override(language) if language else nullcontext():
        return str(message) % facts if facts else str(message)


def reason_text(reason: str, language: str | None = None) -> str:
    """Why a check could not run, in `language`; an unknown reason is shown as its code."""
    return render(NOT_CHECKED_REASONS.get(reason, reason), language)


# A failed task as the editor who finds it in review reads it (SPEC §10.1), one entry per failure code (the
# worker: governance.work.queue; the codes are the errors' of governance.errors and the runs'): what failed,
# what they can do about it, and what the code means in plain words. The task's own message (written for the
# consuming system, as it was written) follows as the detail.
@dataclass(frozen=True)
class TaskFailureWords:
    what: str
    todo: str
    means: str


_RETRY_ONCE = _("Retry once. If it fails again, give an administrator the task's id.")
TASK_FAILURE_OTHER = TaskFailureWords(
    what=_("The task could not be run."), todo=_RETRY_ONCE,
    means=_("Gavel has no explanation for this code; the message below is all the consuming system was told."))
TASK_FAILURES = {
    "provider_error": TaskFailureWords(
        what=_("The model provider did not deliver a text: every provider this configuration may use failed."),
        todo=_("Retry once the provider is reachable again. If it fails again, ask an administrator to look at the "
               "provider named below; the governance log says how it failed."),
        means=_("Every provider this configuration may use, its fallbacks included, failed or refused the request; "
                "where asking again could help, the worker tried again after growing pauses before it gave up.")),
    "provider_timeout": TaskFailureWords(
        what=_("The model provider did not answer in time."),
        todo=_("Retry: a slow provider often answers on a later attempt. If it keeps timing out, ask an "
               "administrator to look at the provider's timeout."),
        means=_("No provider this configuration may use answered within its timeout, on any of the worker's "
                "attempts.")),
    "provider_configuration": TaskFailureWords(
        what=_("A provider of this configuration is not set up correctly, so no model was asked."),
        todo=_("Ask an administrator to fix the provider named below, then retry."),
        means=_("The provider's key variable is one Gavel does not allow, so Gavel refuses to use that provider.")),
    "budget_exceeded": TaskFailureWords(
        what=_("The configuration had used up its budget for the day, so no text was written."),
        todo=_("Retry tomorrow, when the budget starts again, or ask an administrator to raise the configuration's "
               "cap."),
        means=_("The configuration had reached one of its daily caps before the model was asked; nothing was spent "
                "on this task.")),
    "unknown_configuration": TaskFailureWords(
        what=_("The configuration this task names no longer exists."),
        todo=_("Ask an administrator to restore a configuration with that identifier, then retry."),
        means=_("The configuration the task names, or one it adds, no longer exists, so there was nothing to run "
                "the task with.")),
    "unsupported_parameter": TaskFailureWords(
        what=TASK_FAILURE_OTHER.what, todo=TASK_FAILURE_OTHER.todo,
        means=_("The provider of this configuration does not take a parameter the task asks for.")),
    "internal_error": TaskFailureWords(
        what=_("Gavel ran into an unexpected error while running this task; it has been logged."),
        todo=_RETRY_ONCE,
        means=_("Gavel itself ran into an unexpected error on every attempt, up to its limit of attempts; the "
                "error is in the server's log, not in the message.")),
}
TASK_FAILURES["server_error"] = TASK_FAILURES["internal_error"]


def settle_reported_hints(hints: list, language: str | None = None) -> None:
    """A report-mode list's hint says the text was delivered; once another check stopped the text,
    say that instead (the hint stays: it is still a finding)."""
    delivered = render(TERM_REPORTED_SUFFIX, language)
    stopped = render(TERM_REPORTED_STOPPED_SUFFIX, language)
    for hint in hints:
        message = hint.get("message") if isinstance(hint, dict) else None
        if hint and hint.get("check") == "term_list" and isinstance(message, str) and message.endswith(delivered):
            hint["message"] = message[: -len(delivered)] + stopped


# How each kind of provider failure reads (governance.runs.provider_failures keeps the facts); the HTTP
# status is added where one arrived.
FAILURE_KINDS = {
    "connection": _("could not connect"),
    "timeout": _("no answer in time"),
    "missing_key": _("its key variable is not set"),
    "rate_limited": _("rate limited"),
    "server_error": _("server error"),
    "unauthorized": _("the key was refused"),
    "forbidden": _("access refused"),
    "payment_required": _("payment required"),
    "not_found": _("model or endpoint not found"),
    "bad_request": _("request refused"),
    "unusable_response": _("its answer could not be read"),
}


def failure_how(fact: dict, *, for_admin: bool) -> str:
    """How the call failed, in the active language. The administrator also reads the address and
    the key variable; a consumer does not (they are the deployment's, not the caller's)."""
    kind = fact.get("failure", "")
    address = fact.get("api_base", "") if for_admin else ""
    if kind == "connection" and fact.get("refused"):
        text = (gettext("connection refused at %(address)s") % {"address": address} if address
                else gettext("connection refused"))
    elif kind == "connection":
        text = (gettext("could not connect to %(address)s") % {"address": address} if address
                else str(FAILURE_KINDS[kind]))
    elif kind == "missing_key" and for_admin and fact.get("key_env"):
        text = gettext("the key variable %(variable)s is not set") % {"variable": fact["key_env"]}
    elif kind == "timeout" and fact.get("timeout"):
        text = gettext("no answer within %(seconds)s s") % {"seconds": fact["timeout"]}
    else:
        text = str(FAILURE_KINDS.get(kind, gettext("the call failed")))
    if fact.get("status") and kind != "timeout":
        text = gettext("HTTP %(status)s, %(how)s") % {"status": fact["status"], "how": text}
    if kind != "connection" and kind != "missing_key" and address:
        text += " " + gettext("(at %(address)s)") % {"address": address}
    return text


def failure_sentence(fact: dict, *, for_admin: bool) -> str:
    """`provider demo-local (configuration demo): connection refused at http://…`."""
    return gettext("provider %(provider)s (configuration %(configuration)s): %(how)s") % {
        "provider": fact.get("provider", "?"), "configuration": fact.get("configuration", "?"),
        "how": failure_how(fact, for_admin=for_admin)}


def failure_for_consumer(failures: list[dict]) -> str:
    return "; ".join(failure_sentence(fact, for_admin=False) for fact in failures)

# `manage.py check --deploy` (governance/evidence/key_check.py): evidence hashed under another key.
EVIDENCE_OTHER_KEY = _(
    "%(count)d evidence record(s), the newest from %(newest)s, were hashed under evidence key %(key_ids)s, "
    "not under this process's key %(current)s: this process cannot verify them.")
EVIDENCE_OTHER_KEY_HINT = _(
    "Every process of an installation must read the same SECRET_KEY (or GAVEL_EVIDENCE_SECRET): put them in "
    "the environment file (GAVEL_ENV_FILE, default var/gavel.env) rather than exporting them per shell. "
    "Records of a key retired on purpose stay unverifiable (docs/evidence.md).")
